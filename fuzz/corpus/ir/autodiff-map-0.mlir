// A map broadcasting c over j and writing another layout: d_c is summed over
// j (in f32) and d_x is relaid out to x's layout. Residual adds pass the
// cotangent through without any op. Map bodies compute in f64.

sluice.graph @scale(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                    %c: !sluice.tensor<[i=8], f32> {sluice.name = "c"},
                    %r: !sluice.tensor<[i=8, j=4], f32> {sluice.name = "r"})
    -> (!sluice.tensor<[i=8, j=4], f32> {sluice.name = "y"}) {
  %e = sluice.map (%x, %c) {sluice.name = "e"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> !sluice.tensor<[i=8, j=4], f32> {
  ^bb0(%a: f64, %b: f64):
    %p = arith.mulf %a, %b : f64
    %q = math.exp %p : f64
    sluice.yield %q : f64
  }
  %y = sluice.residual_add %e, %r {sluice.name = "res"} : (!sluice.tensor<[i=8, j=4], f32>, !sluice.tensor<[i=8, j=4], f32>)
      -> !sluice.tensor<[i=8, j=4], f32>
  sluice.return %y : !sluice.tensor<[i=8, j=4], f32>
}
