"""Checks report.json's "layout_policies" against the runs of each policy.

usage: check_layout_policies.py SLUICEC SPEC WORKDIR [sluicec options...]

Runs `sluicec SPEC` with --select-layouts=on, =off and =canonical (plus the
options). Every report must list the same three policies ("selected",
"builder", "canonical") with the same numbers, "compiled" true for the
policy the run used; each
policy's bytes (per phase and in total), baseline, reduction and relayout
kernels must equal what the report of the run compiled with that policy
says in its totals and kernels, and its predicted times those of that
run's prediction. Prints one line per policy and "OK", or exits non-zero
naming the first mismatch.
"""
import json
import subprocess
import sys

sluicec, spec, workdir, *options = sys.argv[1:]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


SWITCHES = {"selected": "on", "builder": "off", "canonical": "canonical"}
reports = {}
for switch in SWITCHES.values():
    out = f"{workdir}/{switch}"
    subprocess.run([sluicec, spec, "-o", out, "--quiet",
                    f"--select-layouts={switch}", *options], check=True)
    reports[switch] = json.load(open(f"{out}/report.json"))

policies = {switch: report.get("layout_policies") for switch, report in reports.items()}
for switch, listed in policies.items():
    if not listed or [p["policy"] for p in listed] != list(SWITCHES):
        fail(f"--select-layouts={switch}: expected policies {list(SWITCHES)}; got {listed}")
    compiled = {p["policy"]: p["compiled"] for p in listed}
    want = {policy: value == switch for policy, value in SWITCHES.items()}
    if compiled != want:
        fail(f"--select-layouts={switch}: compiled flags {compiled}, expected {want}")


def strip(policy):
    return {k: v for k, v in policy.items() if k != "compiled"}


for switch in SWITCHES.values():
    if [strip(p) for p in policies[switch]] != [strip(p) for p in policies["on"]]:
        fail(f"the --select-layouts={switch} and =on runs disagree on the policies' numbers")

for policy, switch in SWITCHES.items():
    entry = next(p for p in policies["on"] if p["policy"] == policy)
    totals = reports[switch]["totals"]
    expected = {
        "bytes": totals["bytes"],
        "forward_bytes": totals["by_phase"]["forward"]["bytes"],
        "backward_bytes": totals["by_phase"]["backward"]["bytes"],
        "baseline_bytes": totals["baseline_bytes"],
        "reduction_percent": totals["reduction_percent"],
        "relayout_kernels": sum(
            1 for op in reports[switch]["ops"]
            if op["kind"] == "relayout"
            or any(m["kind"] == "relayout" for m in op.get("members", []))),
    }
    for key, value in expected.items():
        if entry[key] != value:
            fail(f"{policy}: {key} {entry[key]}, but the --select-layouts={switch} run says {value}")
    prediction = reports[switch].get("prediction")
    if prediction:
        for key in ("target", "forward_us", "backward_us", "total_us"):
            if entry["prediction"][key] != prediction[key]:
                fail(f"{policy}: prediction {key} {entry['prediction'][key]}, "
                     f"but the --select-layouts={switch} run says {prediction[key]}")
    elif "prediction" in entry:
        fail(f"{policy}: a prediction without a target")
    print(f"{policy}: bytes {entry['bytes']}, relayout kernels {entry['relayout_kernels']}, "
          f"predicted {entry['prediction']['total_us'] if 'prediction' in entry else '-'} us")
print("OK")
