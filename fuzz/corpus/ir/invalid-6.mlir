sluice.graph @g() -> (f32 {sluice.name = "y"}) {
  sluice.return
}
