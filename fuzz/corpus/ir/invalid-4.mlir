// Arguments and results share one namespace.
sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "x"}) {
  sluice.return %a : !sluice.tensor<[i=4], f32>
}
