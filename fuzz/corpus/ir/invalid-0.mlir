// Every diagnostic of the sluice ops' verifiers and custom parsers
// (SluiceOps.cpp), and structural errors that must be diagnostics, not
// crashes.

//===----------------------------------------------------------------------===//
// graph
//===----------------------------------------------------------------------===//

sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=4], f32>) {
  sluice.return
}
