// RUN: sluice-opt %s -split-input-file -verify-diagnostics

// The origin kind is a typed enum attribute: a string is rejected by the
// dialect's attribute verifier.
sluice.graph @string_origin_kind(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{'sluice.relayout' op expects 'sluice.origin_kind' to be an origin kind (#sluice<origin_kind ...>), got "layout"}}
  %y = sluice.relayout %x {sluice.origin_kind = "layout"} : !sluice.tensor<[i=8], f32> -> !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}

// -----

// An unknown kind does not parse; the parser lists the allowed ones.
sluice.graph @unknown_origin_kind(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  // expected-error @+2 {{expected ::mlir::sluice::OriginKind to be one of: bias_add, residual_add, softmax, layernorm, rmsnorm, relu, gelu, gelu_tanh, silu, swiglu, rope, dropout, causal_mask, contract, map, reduce, random_mask, relayout, rename, grad_acc, zero, layout}}
  // expected-error @+1 {{failed to parse Sluice_OriginKindAttr parameter 'value'}}
  %y = sluice.relayout %x {sluice.origin_kind = #sluice<origin_kind bias_relu>} : !sluice.tensor<[i=8], f32> -> !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}
