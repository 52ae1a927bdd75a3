sluice.graph @G(%x: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  %y = sluice.map (%x) : (!sluice.tensor<[i=4], f32>) -> !sluice.tensor<[i=4], f32> {
  ^bb0(%a: f32):
    %s = math.sin %a : f32
    sluice.yield %s : f32
  }
  sluice.return %y : !sluice.tensor<[i=4], f32>
}
