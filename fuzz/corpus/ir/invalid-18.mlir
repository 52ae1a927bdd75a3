sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  %m = sluice.map () {index_dims = ["i"]} : () -> !sluice.tensor<[i=4], f32> {
  ^bb0(%i: index):
    sluice.yield %i : index
  }
  sluice.return %m : !sluice.tensor<[i=4], f32>
}

//===----------------------------------------------------------------------===//
// contract
//===----------------------------------------------------------------------===//
