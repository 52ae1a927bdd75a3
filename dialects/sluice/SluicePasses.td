//===- SluicePasses.td - sluice passes ---------------------*- tablegen -*-===//

#ifndef SLUICE_PASSES_TD
#define SLUICE_PASSES_TD

include "mlir/Pass/PassBase.td"

def SluiceCount : Pass<"sluice-count", "::mlir::ModuleOp"> {
  let summary = "Annotates every op with its class, flop and bytes moved";
  let description = [{
    Runs the data-movement analysis (`sluice/Analysis/DataMovement.h`) and
    attaches its numbers to every counted op as discardable attributes, and
    the totals to each graph. Fails, naming the op, if a count overflows 64
    bits. The counting rules are in docs/Accounting.md.

    Before:
    ```mlir
    %y = sluice.relu %x : !sluice.tensor<[j=4, i=8], f32>
    ```
    After:
    ```mlir
    %y = sluice.relu %x {sluice.bytes_read = 128 : i64, sluice.bytes_written = 128 : i64,
                         sluice.class = "element-wise", sluice.flop = 32 : i64}
        : !sluice.tensor<[j=4, i=8], f32>
    ```
  }];
}

def SluiceDecompose : Pass<"sluice-decompose", "::mlir::ModuleOp"> {
  let summary = "Replaces composite ops by the primitives they stand for";
  let description = [{
    Every op implementing `CompositeOpInterface` (bias_add, residual_add,
    softmax, layernorm, relu, gelu, gelu_tanh, dropout, causal_mask) is
    replaced by its decomposition into map, reduce, contract, random_mask,
    relayout and rename. Results do not change; the interpreter checks it.

    Before:
    ```mlir
    %y = sluice.relu %x : !sluice.tensor<[i=8], f32>
    ```
    After:
    ```mlir
    %y = sluice.map (%x) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
    ^bb0(%v: f32):
      %zero = arith.constant 0.000000e+00 : f32
      %r = arith.maximumf %v, %zero : f32
      sluice.yield %r : f32
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

#endif // SLUICE_PASSES_TD
