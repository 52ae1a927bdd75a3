"""Checks the pictures `sluicec --graph` wrote against report.json.

  check_pictures.py DIR

Both DIR/graph.svg and DIR/roofline.svg must parse as XML and hold exactly
one element of class "kernel <phase>" per op of DIR/report.json, with id
"<graph>:<name>" (same names, same phases). graph.svg must have an edge for
every kernel but the first of each graph that reads another kernel's result,
and, for a training layer, dashed edges for saved tensors. Prints one line
per picture; exits 1 with the reason on the first mismatch.
"""

import collections
import json
import os
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def fail(message):
    print("check_pictures: error: " + message)
    sys.exit(1)


def kernels_in(path):
    """(phase, name) -> count of the kernel elements of an SVG file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as err:
        fail("%s does not parse: %s" % (path, err))
    if root.tag != SVG + "svg":
        fail("%s: the root element is %s, not svg" % (path, root.tag))
    found = collections.Counter()
    for element in root.iter(SVG + "g"):
        classes = element.get("class", "").split()
        if "kernel" not in classes:
            continue
        phases = [c for c in classes if c in ("forward", "backward")]
        if len(phases) != 1 or ":" not in element.get("id", ""):
            fail("%s: kernel element without phase or graph:name id: %s" %
                 (path, element.attrib))
        found[(phases[0], element.get("id").split(":", 1)[1])] += 1
    return root, found


def main():
    directory = sys.argv[1]
    with open(os.path.join(directory, "report.json")) as f:
        report = json.load(f)
    expected = collections.Counter((op["phase"], op["name"])
                                   for op in report["ops"])
    training = any(phase == "backward" for phase, _ in expected)
    for picture in ("graph.svg", "roofline.svg"):
        root, found = kernels_in(os.path.join(directory, picture))
        if found != expected:
            fail("%s: kernels %s, report.json has %s (missing %s, extra %s)" %
                 (picture, sum(found.values()), sum(expected.values()),
                  sorted((expected - found).elements()),
                  sorted((found - expected).elements())))
        line = "%s: %d kernels" % (picture, sum(found.values()))
        if picture == "graph.svg":
            edges = [g for g in root.iter(SVG + "g")
                     if g.get("class") == "edge"]
            saved = [g for g in edges
                     if any(p.get("stroke-dasharray")
                            for p in g.iter(SVG + "path"))]
            if not edges:
                fail("graph.svg has no edges")
            if training and not saved:
                fail("graph.svg has no saved-tensor (dashed) edges")
            line += ", %d edges, %d saved" % (len(edges), len(saved))
        print(line)


if __name__ == "__main__":
    main()
