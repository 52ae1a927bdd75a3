sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) {
  %r = sluice.bias_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// residual_add
//===----------------------------------------------------------------------===//
