// Every diagnostic of !sluice.tensor (SluiceTypes.cpp).
// RUN: sluice-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{tensor dimension 'j' appears more than once}}
!t = !sluice.tensor<[j=4, i=8, j=4], f32>

// -----

// expected-error @+1 {{tensor dimension 'i' has size 0; sizes must be positive}}
!t = !sluice.tensor<[j=4, i=0], f32>

// -----

// expected-error @+1 {{tensor dimension 'i' has size -3; sizes must be positive}}
!t = !sluice.tensor<[i=-3], f32>

// -----

// expected-error @+1 {{tensor dimension names must not be empty}}
!t = !sluice.tensor<[""=4], f32>

// -----

// expected-error @+1 {{tensor element type must be f32, f16 or bf16, got 'f64'}}
!t = !sluice.tensor<[i=4], f64>

// -----

// expected-error @+1 {{tensor element type must be f32, f16 or bf16, got 'i32'}}
!t = !sluice.tensor<[i=4], i32>

// -----

// expected-error @+1 {{tensor element type must be f32, f16 or bf16, got 'f8E4M3FN'}}
!t = !sluice.tensor<[], f8E4M3FN>

// -----

// Parse errors.

// expected-error @+1 {{expected '='}}
!t = !sluice.tensor<[i], f32>

// -----

// expected-error @+1 {{expected integer value}}
!t = !sluice.tensor<[i=x], f32>

// -----

// expected-error @+1 {{expected ','}}
!t = !sluice.tensor<[i=4]>

// -----

// expected-error @+1 {{expected '['}}
!t = !sluice.tensor<i=4, f32>

// -----

// expected-error @+1 {{integer value too large}}
!t = !sluice.tensor<[i=99999999999999999999], f32>

// -----

// The same checks apply where a type is written inside an op.
// expected-error @+1 {{tensor dimension 'j' appears more than once}}
sluice.graph @g(%x: !sluice.tensor<[j=4, j=4], f32> {sluice.name = "x"}) {
  sluice.return
}
