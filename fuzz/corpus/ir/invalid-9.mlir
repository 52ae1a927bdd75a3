// A graph needs a body.
sluice.graph @g()
