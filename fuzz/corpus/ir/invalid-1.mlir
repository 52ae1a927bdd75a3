sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = 3 : i64}) {
  sluice.return
}
