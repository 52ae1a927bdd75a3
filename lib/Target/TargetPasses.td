//===- TargetPasses.td - passes before the printers --------*- tablegen -*-===//

#ifndef SLUICE_TARGET_PASSES_TD
#define SLUICE_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def LegalizeForEmission : Pass<"sluice-legalize-for-emission", "::mlir::ModuleOp"> {
  let summary = "Make sluice_exec IR printable: C names, descriptor slots, alignment";
  let description = [{
    Runs last before the printers (lib/Target), so that a printer never
    meets IR it cannot print:

    * names: every `sluice_exec.arg` field becomes the C identifier of its
      args-struct field (`ln1.scale` -> `ln1_scale`, the rule the module
      header uses); two tensors whose names give the same identifier are
      an error;
    * cuBLASLt descriptors: every GEMM gets its descriptor slot, numbered
      0, 1, ... in module order, the plain GEMMs of fallback regions
      after all the others (the CUDA printer runs every GEMM on cuBLASLt;
      the C++ printer ignores the slot);
    * alignment: every arena view's offset must be a multiple of 16 bytes
      (one vector access; the memory plan aligns to 256).

    Before:
    ```mlir
    %b = sluice_exec.arg "ln1.bias"
    sluice_exec.gemm %w * %x -> %h bias %b {..., epilogue = #sluice_exec.epilogue<bias>}
    ```
    After:
    ```mlir
    %b = sluice_exec.arg "ln1_bias"
    sluice_exec.gemm %w * %x -> %h bias %b {..., descriptor = 0 : i64, epilogue = #sluice_exec.epilogue<bias>}
    ```
  }];
}

#endif // SLUICE_TARGET_PASSES_TD
