//===- LayoutPasses.td - passes that price on a target -----*- tablegen -*-===//
//
// The global layout selection reads the cost model and the target
// descriptions (lib/Analysis), so it lives here rather than beside the
// dialect, whose passes depend on nothing in lib/.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LAYOUT_PASSES_TD
#define SLUICE_LAYOUT_PASSES_TD

include "mlir/Pass/PassBase.td"

def SluiceSelectLayouts : Pass<"sluice-select-layouts", "::mlir::sluice::GraphOp"> {
  let summary = "Chooses every intermediate tensor's layout and every contraction's GEMM mapping from the cost model";
  let description = [{
    Global layout selection (docs/Layout.md): tensors tied by element-wise
    ops and composites form layout classes; every class that touches a
    contraction and holds no boundary tensor (graph argument or result,
    rename, relayout) gets the dimension order that minimizes the cost
    model's predicted time of the graph's contractions (as the
    strided-batched GEMMs their layouts map to, plus the relayouts
    `--sluice-legalize-contractions` would insert where they map to none;
    with `backward`, their two gradient contractions too) and of its
    reductions (along or across the contiguous dimension). The minimum is
    exact: LayoutSolver's frontier DP over the terms in program order. Only
    types change; the GEMM mappings follow from them (GemmMapping.h), e.g. a
    projection that writes `[j, b, h, p]` as a GEMM per `b` with the weight
    shared (batch stride 0), which the attention contractions read without
    relayouts.

    Before (`q` feeds `qk`, which needs `[b, h]` collapsible):
    ```mlir
    %q = sluice.contract %x, %wq : (!sluice.tensor<[b=2, j=4, i=8], f32>,
        !sluice.tensor<[h=2, p=4, i=8], f32>) -> !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
    ```
    After: `-> !sluice.tensor<[j=4, b=2, h=2, p=4], f32>`.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "The GPU target to price on (a built-in name or a JSON file); "
           "empty: the module's sluice.target architecture's default, else h100">,
    Option<"backward", "backward", "bool", /*default=*/"false",
           "Price each contraction's gradient contractions too (training)">,
    Option<"checkExhaustive", "check-exhaustive", "bool", /*default=*/"false",
           "Also enumerate every assignment and fail unless it agrees (tests)">,
    Option<"maxCandidates", "max-candidates", "unsigned", /*default=*/"0",
           "Keep only the first N candidate layouts of each class (0: all; "
           "tests that enumerate exhaustively)">,
    Option<"streaming", "streaming", "bool", /*default=*/"false",
           "The contractions the streaming rule of --sluice-fuse takes "
           "(dialects/sluice/Analysis/StreamedContractions.h) are not priced "
           "as GEMMs: their streaming kernel reads any layout">,
    Option<"remark", "remark", "bool", /*default=*/"false",
           "Report the selection (classes, changed tensors, solver states, "
           "predicted seconds) as a remark on each graph">,
  ];

}

#endif // SLUICE_LAYOUT_PASSES_TD
