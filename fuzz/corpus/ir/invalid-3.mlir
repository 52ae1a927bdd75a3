sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "x"},
                %b: !sluice.tensor<[i=4], f32> {sluice.name = "x"}) {
  sluice.return
}
