// Layernorm: the statistics mean and rstd are saved (with x and the scale);
// the sum of squares is not: the rstd map's derivative reads rstd itself.
// Primitives are named after the composite ("ln.mean", "ln.rstd", ...).


sluice.graph @norm(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                   %g: !sluice.tensor<[i=8], f32> {sluice.name = "g"},
                   %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"})
    -> (!slui