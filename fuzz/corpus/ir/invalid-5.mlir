sluice.graph @g(%a: f32 {sluice.name = "a"}) {
  sluice.return
}
