sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  %r = sluice.reduce min %a over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// random_mask
//===----------------------------------------------------------------------===//
