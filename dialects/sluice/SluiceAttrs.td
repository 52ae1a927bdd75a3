//===- SluiceAttrs.td - sluice attributes ------------------*- tablegen -*-===//

#ifndef SLUICE_ATTRS_TD
#define SLUICE_ATTRS_TD

include "dialects/sluice/SluiceDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Sluice_ReduceKind : I32EnumAttr<"ReduceKind", "how a reduction combines elements", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_ReduceKindAttr : EnumAttr<Sluice_Dialect, Sluice_ReduceKind, "reduce_kind"> {
  let assemblyFormat = "$value";
}

def Sluice_Phase : I32EnumAttr<"Phase", "which pass of a training step a graph runs in", [
    I32EnumAttrCase<"forward", 0>,
    I32EnumAttrCase<"backward", 1>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_PhaseAttr : EnumAttr<Sluice_Dialect, Sluice_Phase, "phase"> {
  let assemblyFormat = "$value";
}

def Sluice_KernelKind : I32EnumAttr<"KernelKind", "what runs a kernel", [
    I32EnumAttrCase<"fused", 0>,
    I32EnumAttrCase<"gemm", 1>,
    I32EnumAttrCase<"streaming", 2>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_KernelKindAttr : EnumAttr<Sluice_Dialect, Sluice_KernelKind, "kernel_kind"> {
  let assemblyFormat = "$value";
}

def Sluice_Epilogue : I32EnumAttr<"Epilogue", "what a library contraction applies to its product", [
    I32EnumAttrCase<"bias", 0>,
    I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"gelu", 2>,
    I32EnumAttrCase<"bias_relu", 3>,
    I32EnumAttrCase<"bias_gelu", 4>,
    I32EnumAttrCase<"bgrada", 5>,
    I32EnumAttrCase<"bgradb", 6>,
    I32EnumAttrCase<"accumulate", 7>,
    I32EnumAttrCase<"bias_gelu_aux", 8>,
    I32EnumAttrCase<"dgelu", 9>,
    I32EnumAttrCase<"dgelu_bgrad", 10>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_EpilogueAttr : EnumAttr<Sluice_Dialect, Sluice_Epilogue, "epilogue"> {
  let assemblyFormat = "$value";
}

def Sluice_OriginKind : I32EnumAttr<"OriginKind",
    "what a primitive stands for: the composite (or primitive) op it was decomposed from or whose gradient it computes, or a role given by a pass", [
    // Composites (their mnemonics).
    I32EnumAttrCase<"bias_add", 0>,
    I32EnumAttrCase<"residual_add", 1>,
    I32EnumAttrCase<"softmax", 2>,
    I32EnumAttrCase<"layernorm", 3>,
    I32EnumAttrCase<"rmsnorm", 4>,
    I32EnumAttrCase<"relu", 5>,
    I32EnumAttrCase<"gelu", 6>,
    I32EnumAttrCase<"gelu_tanh", 7>,
    I32EnumAttrCase<"silu", 8>,
    I32EnumAttrCase<"swiglu", 9>,
    I32EnumAttrCase<"rope", 10>,
    I32EnumAttrCase<"dropout", 11>,
    I32EnumAttrCase<"causal_mask", 12>,
    // Primitives written directly (autodiff tags their gradients).
    I32EnumAttrCase<"contract", 13>,
    I32EnumAttrCase<"map", 14>,
    I32EnumAttrCase<"reduce", 15>,
    I32EnumAttrCase<"random_mask", 16>,
    I32EnumAttrCase<"relayout", 17>,
    I32EnumAttrCase<"rename", 18>,
    // Roles given by passes: a gradient sum and a zero gradient (autodiff),
    // a relayout inserted for code generation (legalize-contractions).
    I32EnumAttrCase<"grad_acc", 19>,
    I32EnumAttrCase<"zero", 20>,
    I32EnumAttrCase<"layout", 21>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}
def Sluice_OriginKindAttr : EnumAttr<Sluice_Dialect, Sluice_OriginKind, "origin_kind"> {
  let assemblyFormat = "$value";
  let description = [{
    The discardable `sluice.origin_kind` attribute of a primitive, e.g.
    `sluice.origin_kind = #sluice<origin_kind softmax>`: the mnemonic of the
    composite it was decomposed from (or of the forward op whose gradient it
    computes), `grad_acc`/`zero` for gradient sums and zero gradients, or
    `layout` for relayouts inserted for code generation. Fusion (GEMM
    epilogues), the baseline accounting and autodiff (softmax recomputation)
    read it; the dialect verifier rejects any other attribute under this name.
  }];
}

def Sluice_StreamingAttr : AttrDef<Sluice_Dialect, "Streaming"> {
  let mnemonic = "streaming";
  let summary = "What a streaming (online-softmax) kernel computes";
  let description = [{
    Carried by a `sluice.kernel` of kind `streaming` (docs/Fusion.md,
    "Streaming kernels"). The kernel body is the dense definition; this
    attribute summarizes it for the emitters: `direction` (forward or
    backward), the query-row dimension `rows` and the streamed key
    dimension `cols` (the one the softmax reduces and the second
    contraction contracts), the first contraction's `scale`, whether the
    scores are causally masked (`cols > rows` set to -inf), and the
    dropout `probability` (0: none) with its RNG `stream`.

    ```mlir
    #sluice.streaming<direction = forward, rows = "j", cols = "k",
                      scale = 1.250000e-01 : f64, causal = false,
                      dropout = 1.000000e-01 : f64, stream = 0>
    ```
  }];
  let parameters = (ins EnumParameter<Sluice_Phase>:$direction,
                        StringRefParameter<"query-row dimension">:$rows,
                        StringRefParameter<"streamed key dimension">:$cols,
                        "::mlir::FloatAttr":$scale,
                        "bool":$causal,
                        "::mlir::FloatAttr":$dropout,
                        "int64_t":$stream);
  let assemblyFormat = "`<` struct(params) `>`";
}

// Pass options (typed: the option parser accepts exactly these spellings).

def Sluice_ComputeType : I32EnumAttr<"ComputeType", "the float type map bodies compute in", [
    I32EnumAttrCase<"f32", 0>,
    I32EnumAttrCase<"f64", 1>]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}

def Sluice_MaskPolicy : I32EnumAttr<"MaskPolicy", "where dropout keep-masks live between forward and backward", [
    I32EnumAttrCase<"Auto", 0, "auto">,
    I32EnumAttrCase<"Regenerate", 1, "regenerate">,
    I32EnumAttrCase<"Bitpack", 2, "bitpack">]> {
  let cppNamespace = "::mlir::sluice";
  let genSpecializedAttr = 0;
}

#endif // SLUICE_ATTRS_TD
