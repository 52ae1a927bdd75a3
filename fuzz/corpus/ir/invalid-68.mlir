sluice.graph @g(%a: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "a"}) {
  %r = "sluice.softmax"(%a) <{dim = "k"}> : (!sluice.tensor<[j=4, k=4], f32>) -> !sluice.tensor<[k=4, j=4], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// layernorm
//===----------------------------------------------------------------------===//
