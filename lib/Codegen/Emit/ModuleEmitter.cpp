//===- ModuleEmitter.cpp - the C ABI around the kernels -------------------===//
//
// Walks the forward (and backward) graph after --sluice-fuse: every kernel
// becomes a launch (fused kernels through the shared core, gemm kernels
// through cuBLAS/cuBLASLt or the CPU GEMM plus the core for what cuBLASLt
// does not fold), renames become pointer aliases, and the graph's boundary
// maps onto the args structs of the C ABI. Intermediates live in one arena
// at the MemoryPlan's offsets; saved tensors stay there between the forward
// and the backward.
//
//===----------------------------------------------------------------------===//

#include "EmitInternal.h"

#include "dialects/sluice/SluiceBuilders.h"

#include "sluice/Codegen/GemmMapping.h"
#include "sluice/Codegen/MemoryPlan.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <cstdio>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::emit;

namespace mlir::sluice::emit {
extern const char *const kRuntimeHeader;
extern const char *const kHostHeader;
extern const char *const kKernelsHeader;
extern const char *const kCpuGemmHeader;
extern const char *const kPhiloxHeader;
} // namespace mlir::sluice::emit

std::string mlir::sluice::sanitizeModuleName(StringRef name) {
  std::string out;
  for (char c : name)
    out += (llvm::isAlnum(c) || c == '_') ? c : '_';
  return out;
}

std::string mlir::sluice::moduleFileStem(StringRef name) {
  bool plain = !name.empty() && name.front() != '.' && name.front() != '-' &&
               llvm::all_of(name, [](char c) {
                 return llvm::isAlnum(c) || c == '_' || c == '-' || c == '.';
               });
  return plain ? name.str() : sanitizeModuleName(name);
}

StringRef mlir::sluice::defaultModuleName(ModuleOp module) {
  if (auto spec = module->getAttrOfType<StringAttr>("sluice.spec"))
    return spec.getValue();
  for (GraphOp graph : module.getOps<GraphOp>())
    if (graph.getPhase() == Phase::forward) {
      StringRef name = graph.getSymName();
      name.consume_back("_forward");
      return name;
    }
  return "module";
}

std::string mlir::sluice::emit::describeKernel(KernelOp kernel) {
  std::string text = "kernel";
  if (auto name = kernel->getAttrOfType<StringAttr>("sluice.name"))
    text += " '" + name.getValue().str() + "'";
  SmallVector<StringRef> members;
  for (Attribute member : kernel.getMembers())
    members.push_back(llvm::cast<StringAttr>(member).getValue());
  text += " (" + std::string(stringifyKernelKind(kernel.getKind()));
  if (!members.empty())
    text += ": " + llvm::join(members, ", ");
  text += ")";
  // The text goes into C string literals.
  std::string safe;
  for (char c : text)
    if (c != '"' && c != '\\' && c != '%')
      safe += c;
  return safe;
}

namespace {
/// One field of an args struct: a boundary tensor.
struct Field {
  std::string name, ident;
  NamedTensorType type;
  bool output = false;
};

int dtypeCode(Type element) {
  return element.isF16() ? 1 : element.isBF16() ? 2 : 0;
}
std::string cudaDataType(Type element) {
  return element.isF16()    ? "CUDA_R_16F"
         : element.isBF16() ? "CUDA_R_16BF"
                            : "CUDA_R_32F";
}

class ModuleEmitter {
public:
  ModuleEmitter(ModuleOp module, EmitTarget target, StringRef name)
      : module(module), target(target), name(sanitizeModuleName(name)),
        fileStem(moduleFileStem(name)) {}
  FailureOr<EmittedModule> run();

private:
  bool isCuda() const { return target == EmitTarget::Cuda; }
  LogicalResult collect();
  LogicalResult emitPhase(GraphOp graph, bool backward, llvm::raw_ostream &os);
  LogicalResult emitFused(KernelOp kernel, llvm::raw_ostream &os);
  LogicalResult emitGemm(KernelOp kernel, llvm::raw_ostream &os);
  /// The pointer of a top-level value, or failure with a diagnostic.
  FailureOr<std::string> pointerOf(Value value, Operation *user);
  std::string header() const;
  std::string source(StringRef phases) const;
  std::string fieldsOf(ArrayRef<Field> fields, bool inputsConst) const;

  ModuleOp module;
  EmitTarget target;
  std::string name;
  /// The stem of the emitted file names.
  std::string fileStem;
  MemoryPlan plan;
  GraphOp forward, backward;
  std::vector<Field> forwardFields, backwardFields;
  llvm::DenseMap<Value, std::string> pointers;
  /// Top-level values stored one bit per element (and their views).
  llvm::DenseSet<Value> packedValues;
  std::string kernelText;
  llvm::raw_string_ostream kernels{kernelText};
  std::string contextFields, createText, destroyText;
  unsigned kernelCount = 0, ltCount = 0;
  /// Per phase, the description of every top-level kernel in launch order
  /// (the rows of sluice_profile).
  std::vector<std::string> profiledKernels[2];
  uint64_t scratchBytes = 0;
};
} // namespace

LogicalResult ModuleEmitter::collect() {
  for (GraphOp graph : module.getOps<GraphOp>()) {
    GraphOp &slot = graph.getPhase() == Phase::forward ? forward : backward;
    if (slot)
      return graph.emitOpError()
             << "is a second " << stringifyPhase(graph.getPhase())
             << " graph; code generation emits one layer (one forward graph "
                "and at most one backward graph) per module";
    slot = graph;
  }
  if (!forward)
    return module.emitError() << "has no forward sluice.graph: nothing to emit";
  auto field = [](StringRef canonical, Type type, bool output) {
    return Field{canonical.str(), identifier(canonical),
                 llvm::cast<NamedTensorType>(type), output};
  };
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    forwardFields.push_back(
        field(forward.getArgName(i), forward.getArgumentTypes()[i], false));
  for (unsigned i = 0; i < forward.getNumResults(); ++i)
    if (!forward.getResultName(i).starts_with("saved."))
      forwardFields.push_back(
          field(forward.getResultName(i), forward.getResultTypes()[i], true));
  if (backward) {
    for (Field f : forwardFields) {
      f.output = false;
      backwardFields.push_back(f);
    }
    for (unsigned i = 0; i < backward.getNumArguments(); ++i)
      if (!backward.getArgName(i).starts_with("saved."))
        backwardFields.push_back(field(backward.getArgName(i),
                                       backward.getArgumentTypes()[i], false));
    for (unsigned i = 0; i < backward.getNumResults(); ++i)
      backwardFields.push_back(
          field(backward.getResultName(i), backward.getResultTypes()[i], true));
  }
  for (const std::vector<Field> *fields : {&forwardFields, &backwardFields})
    for (const Field &f : *fields)
      if (storageType(f.type.getElementType()).empty())
        return module.emitError()
               << "boundary tensor '" << f.name << "' has element type "
               << f.type.getElementType()
               << "; the C ABI carries f32, f16 and bf16";
  return success();
}

FailureOr<std::string> ModuleEmitter::pointerOf(Value value, Operation *user) {
  if (auto it = pointers.find(value); it != pointers.end())
    return it->second;
  if (const ArenaBuffer *buffer = plan.lookup(value)) {
    std::string pointer =
        "(ctx->arena + " + std::to_string(buffer->offset) + "ULL)";
    pointers[value] = pointer;
    return pointer;
  }
  return user->emitOpError()
         << "reads or writes a tensor that has neither a boundary field nor "
            "an arena buffer in the memory plan";
}

LogicalResult ModuleEmitter::emitFused(KernelOp kernel, llvm::raw_ostream &os) {
  SmallVector<Operation *> ops;
  for (Operation &op : kernel.getBlock().without_terminator()) {
    // A rename of an input is a view: it reads the input's memory.
    if (auto rename = llvm::dyn_cast<RenameOp>(op))
      if (llvm::isa<BlockArgument>(rename.getInput()))
        continue;
    ops.push_back(&op);
  }
  std::string description = describeKernel(kernel);
  if (ops.empty())
    return kernel.emitOpError() << "is empty: nothing to emit";
  std::string fn = "sluice_kernel_" + std::to_string(kernelCount++);
  if (auto label = kernel->getAttrOfType<StringAttr>("sluice.name"))
    fn += "_" + identifier(label.getValue());
  SmallVector<Value> yielded(kernel.getYield().getOperands());
  FailureOr<FusedGroup> group = makeFusedGroup(fn, description, ops, yielded);
  if (failed(group))
    return failure();
  SmallVector<std::string> inputs, outputs;
  for (auto [index, input] : llvm::enumerate(group->inputs)) {
    input = resolveView(input);
    auto arg = llvm::cast<BlockArgument>(input);
    Value outer = kernel.getInputs()[arg.getArgNumber()];
    FailureOr<std::string> pointer = pointerOf(outer, kernel);
    if (failed(pointer))
      return failure();
    inputs.push_back(*pointer);
    group->inputPacked[index] = packedValues.contains(outer);
  }
  for (auto [index, result] : llvm::enumerate(kernel.getResults())) {
    FailureOr<std::string> pointer = pointerOf(result, kernel);
    if (failed(pointer))
      return failure();
    outputs.push_back(*pointer);
    group->outputPacked[index] = kernel.isPacked(index);
    if (kernel.isPacked(index))
      packedValues.insert(result);
  }
  if (failed(emitFusedKernel(*group, target, kernels)))
    return failure();
  os << "  // " << description << "\n";
  emitFusedLaunch(*group, target, inputs, outputs, os);
  return success();
}

LogicalResult ModuleEmitter::emitGemm(KernelOp kernel, llvm::raw_ostream &os) {
  std::string description = describeKernel(kernel);
  ContractOp contract = kernel.getContraction();
  if (!contract)
    return kernel.emitOpError() << "is a gemm kernel without a contraction";
  FailureOr<GemmMapping> mapping = mapContraction(contract);
  if (failed(mapping))
    return contract.emitOpError()
           << "in " << description
           << " has no strided-batched GEMM mapping for its layouts (run "
              "--sluice-legalize-contractions first)";
  const GemmMapping &g = *mapping;
  for (int64_t value : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batchCount})
    if (value > INT_MAX)
      return contract.emitOpError()
             << "in " << description << " has a GEMM size or leading "
             << "dimension " << value << " beyond the 32-bit BLAS interface";

  // Top-level pointers of the body's block arguments and yielded values.
  Block &block = kernel.getBlock();
  auto outerValue = [&](Value inner) -> Value {
    inner = resolveView(inner);
    if (auto arg = llvm::dyn_cast<BlockArgument>(inner))
      return kernel.getInputs()[arg.getArgNumber()];
    return {};
  };
  FailureOr<std::string> aPointer = pointerOf(outerValue(g.a), kernel);
  FailureOr<std::string> bPointer = pointerOf(outerValue(g.b), kernel);
  if (!outerValue(g.a) || !outerValue(g.b))
    return contract.emitOpError()
           << "in " << description << " must read the kernel's inputs directly";
  if (failed(aPointer) || failed(bPointer))
    return failure();
  if (packedValues.contains(outerValue(g.a)) ||
      packedValues.contains(outerValue(g.b)))
    return contract.emitOpError()
           << "in " << description
           << " reads a bit-packed mask; the BLAS needs it unpacked";

  // Split the other ops: those that read C (the epilogue) and those that
  // do not (bias gradients of A or B).
  llvm::SetVector<Operation *> epilogueOps;
  SmallVector<Operation *> epilogue, independent;
  for (Operation &op : block.without_terminator()) {
    if (&op == contract.getOperation())
      continue;
    if (auto rename = llvm::dyn_cast<RenameOp>(op))
      if (outerValue(rename.getResult()))
        continue; // a view of an input
    bool readsC = llvm::any_of(op.getOperands(), [&](Value operand) {
      return operand == contract.getResult() ||
             epilogueOps.contains(operand.getDefiningOp());
    });
    if (readsC) {
      epilogueOps.insert(&op);
      epilogue.push_back(&op);
    } else {
      independent.push_back(&op);
    }
  }
  ValueRange yielded = kernel.getYield().getOperands();
  SmallVector<Value> epilogueOutputs, independentOutputs;
  SmallVector<std::string> epilogueOutputPointers, independentOutputPointers;
  std::optional<std::string> cPointer;
  for (auto [index, value] : llvm::enumerate(yielded)) {
    if (kernel.isPacked(index))
      return kernel.emitOpError()
             << "result #" << index << " of " << description
             << " is bit-packed; code generation stores masks unpacked (fuse "
                "without packing)";
    FailureOr<std::string> pointer = pointerOf(kernel.getResult(index), kernel);
    if (failed(pointer))
      return failure();
    if (value == contract.getResult()) {
      if (!cPointer)
        cPointer = *pointer;
      else
        return kernel.emitOpError()
               << "yields its contraction twice; not supported";
      continue;
    }
    bool inEpilogue = epilogueOps.contains(value.getDefiningOp());
    (inEpilogue ? epilogueOutputs : independentOutputs).push_back(value);
    (inEpilogue ? epilogueOutputPointers : independentOutputPointers)
        .push_back(*pointer);
  }
  NamedTensorType cType = contract.getResult().getType();
  bool inPlace = false;
  if (!cPointer) {
    if (epilogueOutputs.size() == 1 &&
        epilogueOutputs.front().getType() == cType) {
      cPointer = epilogueOutputPointers.front();
      inPlace = true;
    } else {
      cPointer = "ctx->scratch";
      scratchBytes = std::max(scratchBytes, *cType.getNumBytes());
    }
  }

  // cuBLASLt folds bias / relu / gelu when C is the epilogue's output and
  // the bias is one packed vector over the GEMM's rows.
  std::string ltEpilogue;
  std::string biasPointer;
  StringRef epilogueName = kernel.getEpilogue().value_or("");
  if (isCuda() && inPlace && independent.empty()) {
    SmallVector<Value> others;
    for (Operation *op : epilogue)
      for (Value operand : op->getOperands())
        if (operand != contract.getResult() &&
            !epilogueOps.contains(operand.getDefiningOp()))
          others.push_back(operand);
    bool wantsBias = epilogueName.starts_with("bias");
    bool biasOk = false;
    if (wantsBias && others.size() == 1) {
      auto biasType = llvm::cast<NamedTensorType>(others.front().getType());
      biasOk = isBiasEpilogueLegal(g, biasType) &&
               biasType.getElementType() == cType.getElementType();
      if (biasOk) {
        FailureOr<std::string> pointer =
            pointerOf(outerValue(others.front()), kernel);
        if (failed(pointer))
          return failure();
        biasPointer = *pointer;
      }
    }
    if (epilogueName == "relu" && others.empty())
      ltEpilogue = "CUBLASLT_EPILOGUE_RELU";
    else if (epilogueName == "gelu" && others.empty())
      ltEpilogue = "CUBLASLT_EPILOGUE_GELU";
    else if (epilogueName == "bias" && biasOk)
      ltEpilogue = "CUBLASLT_EPILOGUE_BIAS";
    else if (epilogueName == "bias_relu" && biasOk)
      ltEpilogue = "CUBLASLT_EPILOGUE_RELU_BIAS";
    else if (epilogueName == "bias_gelu" && biasOk)
      ltEpilogue = "CUBLASLT_EPILOGUE_GELU_BIAS";
  }

  Type aElement = llvm::cast<NamedTensorType>(g.a.getType()).getElementType();
  Type bElement = llvm::cast<NamedTensorType>(g.b.getType()).getElementType();
  Type cElement = cType.getElementType();
  os << "  // " << description << ": C[" << g.m << " x " << g.n
     << "] = " << g.alpha << " * op(A)[" << g.m << " x " << g.k
     << "] op(B), batch " << g.batchCount << "\n  {\n";
  char alpha[64];
  std::snprintf(alpha, sizeof(alpha), "%a", static_cast<float>(g.alpha));
  os << "    const float alpha = " << alpha << "f;\n";
  if (isCuda() && !ltEpilogue.empty()) {
    unsigned id = ltCount++;
    std::string suffix = std::to_string(id);
    contextFields += "  cublasLtMatmulDesc_t lt_desc_" + suffix +
                     ";\n  cublasLtMatrixLayout_t lt_a_" + suffix + ", lt_b_" +
                     suffix + ", lt_c_" + suffix + ";\n";
    std::string create;
    llvm::raw_string_ostream cs(create);
    auto layout = [&](StringRef var, Type element, int64_t rows, int64_t cols,
                      int64_t ld, int64_t stride) {
      cs << "  SLUICE_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&ctx->"
         << var << ", " << cudaDataType(element) << ", " << rows << ", " << cols
         << ", " << ld << "), \"cublasLtMatrixLayoutCreate for " << description
         << "\");\n";
      if (g.batchCount > 1)
        cs << "  {\n    int32_t batch = " << g.batchCount
           << ";\n    int64_t stride = " << stride << ";\n"
           << "    SLUICE_CHECK_CUBLAS(cublasLtMatrixLayoutSetAttribute("
              "ctx->"
           << var
           << ", CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)), "
              "\"batch count\");\n"
           << "    SLUICE_CHECK_CUBLAS(cublasLtMatrixLayoutSetAttribute("
              "ctx->"
           << var
           << ", CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, "
              "sizeof(stride)), \"batch stride\");\n  }\n";
    };
    cs << "  SLUICE_CHECK_CUBLAS(cublasLtMatmulDescCreate(&ctx->lt_desc_"
       << suffix
       << ", CUBLAS_COMPUTE_32F, CUDA_R_32F), \"cublasLtMatmulDescCreate for "
       << description << "\");\n";
    cs << "  {\n    cublasOperation_t ta = "
       << (g.transA ? "CUBLAS_OP_T" : "CUBLAS_OP_N")
       << ", tb = " << (g.transB ? "CUBLAS_OP_T" : "CUBLAS_OP_N")
       << ";\n    cublasLtEpilogue_t epilogue = " << ltEpilogue << ";\n"
       << "    "
          "SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_"
          "desc_"
       << suffix
       << ", CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), \"transa\");\n"
       << "    "
          "SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_"
          "desc_"
       << suffix
       << ", CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), \"transb\");\n"
       << "    "
          "SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_"
          "desc_"
       << suffix
       << ", CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), "
          "\"epilogue\");\n  }\n";
    layout("lt_a_" + suffix, aElement, g.transA ? g.k : g.m,
           g.transA ? g.m : g.k, g.lda, g.strideA);
    layout("lt_b_" + suffix, bElement, g.transB ? g.n : g.k,
           g.transB ? g.k : g.n, g.ldb, g.strideB);
    layout("lt_c_" + suffix, cElement, g.m, g.n, g.ldc, g.strideC);
    createText += create;
    destroyText += "  if (ctx->lt_a_" + suffix +
                   ") cublasLtMatrixLayoutDestroy(ctx->lt_a_" + suffix +
                   ");\n  if (ctx->lt_b_" + suffix +
                   ") cublasLtMatrixLayoutDestroy(ctx->lt_b_" + suffix +
                   ");\n  if (ctx->lt_c_" + suffix +
                   ") cublasLtMatrixLayoutDestroy(ctx->lt_c_" + suffix +
                   ");\n  if (ctx->lt_desc_" + suffix +
                   ") cublasLtMatmulDescDestroy(ctx->lt_desc_" + suffix +
                   ");\n";
    os << "    const float beta = 0.0f;\n";
    if (!biasPointer.empty())
      os << "    const void *bias = " << biasPointer << ";\n"
         << "    "
            "SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_"
         << suffix
         << ", CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "
            "\"bias pointer of "
         << description << "\");\n";
    os << "    SLUICE_CHECK_CUBLAS(cublasLtMatmul(ctx->lt, ctx->lt_desc_"
       << suffix << ", &alpha, " << *aPointer << ", ctx->lt_a_" << suffix
       << ", " << *bPointer << ", ctx->lt_b_" << suffix << ", &beta, "
       << *cPointer << ", ctx->lt_c_" << suffix << ", " << *cPointer
       << ", ctx->lt_c_" << suffix
       << ", NULL, ctx->workspace, ctx->workspace_bytes, stream), "
       << "\"cublasLtMatmul of " << description << "\");\n  }\n";
    return success();
  }
  if (isCuda()) {
    os << "    const float beta = 0.0f;\n"
       << "    SLUICE_CHECK_CUBLAS(cublasSetStream(ctx->blas, stream), "
          "\"cublasSetStream\");\n"
       << "    SLUICE_CHECK_CUBLAS(cublasGemmStridedBatchedEx(ctx->blas, "
       << (g.transA ? "CUBLAS_OP_T" : "CUBLAS_OP_N") << ", "
       << (g.transB ? "CUBLAS_OP_T" : "CUBLAS_OP_N") << ", " << g.m << ", "
       << g.n << ", " << g.k << ", &alpha, " << *aPointer << ", "
       << cudaDataType(aElement) << ", " << g.lda << ", " << g.strideA << "LL, "
       << *bPointer << ", " << cudaDataType(bElement) << ", " << g.ldb << ", "
       << g.strideB << "LL, &beta, " << *cPointer << ", "
       << cudaDataType(cElement) << ", " << g.ldc << ", " << g.strideC << "LL, "
       << g.batchCount
       << ", CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), "
          "\"cublasGemmStridedBatchedEx of "
       << description << "\");\n";
  } else {
    os << "    if (sluice_cpu_gemm(" << (g.transA ? "true" : "false") << ", "
       << (g.transB ? "true" : "false") << ", " << g.m << "LL, " << g.n
       << "LL, " << g.k << "LL, alpha, (const " << storageType(aElement)
       << " *)(" << *aPointer << "), " << g.lda << "LL, " << g.strideA
       << "LL, (const " << storageType(bElement) << " *)(" << *bPointer << "), "
       << g.ldb << "LL, " << g.strideB << "LL, (" << storageType(cElement)
       << " *)(" << *cPointer << "), " << g.ldc << "LL, " << g.strideC << "LL, "
       << g.batchCount << "LL))\n"
       << "      return sluice_fail(ctx, SLUICE_ERROR_ALLOC, \"%s: no scratch "
          "memory for the GEMM of "
       << description << "\", phase);\n";
  }
  os << "  }\n";

  // What the library did not fold runs through the shared core.
  auto runGroup = [&](ArrayRef<Operation *> ops, ArrayRef<Value> outputs,
                      ArrayRef<std::string> outputPointers,
                      StringRef what) -> LogicalResult {
    if (ops.empty())
      return success();
    std::string fn = "sluice_kernel_" + std::to_string(kernelCount++);
    if (auto label = kernel->getAttrOfType<StringAttr>("sluice.name"))
      fn += "_" + identifier(label.getValue());
    fn += "_" + what.str();
    FailureOr<FusedGroup> group =
        makeFusedGroup(fn, description + " " + what.str(), ops, outputs);
    if (failed(group))
      return failure();
    SmallVector<std::string> inputs;
    for (Value input : group->inputs) {
      if (input == contract.getResult()) {
        inputs.push_back(*cPointer);
        continue;
      }
      Value outer = outerValue(input);
      if (!outer)
        return kernel.emitOpError() << "epilogue reads a value it cannot "
                                       "address";
      FailureOr<std::string> pointer = pointerOf(outer, kernel);
      if (failed(pointer))
        return failure();
      inputs.push_back(*pointer);
      group->inputPacked[inputs.size() - 1] = packedValues.contains(outer);
    }
    if (failed(emitFusedKernel(*group, target, kernels)))
      return failure();
    emitFusedLaunch(*group, target, inputs, outputPointers, os);
    return success();
  };
  if (failed(runGroup(epilogue, epilogueOutputs, epilogueOutputPointers,
                      "epilogue")) ||
      failed(runGroup(independent, independentOutputs,
                      independentOutputPointers, "bgrad")))
    return failure();
  return success();
}

LogicalResult ModuleEmitter::emitPhase(GraphOp graph, bool isBackward,
                                       llvm::raw_ostream &os) {
  Block &body = graph.getBody().front();
  ArrayRef<Field> fields = isBackward ? backwardFields : forwardFields;
  // Boundary arguments.
  for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
    StringRef argName = graph.getArgName(i);
    Value arg = body.getArgument(i);
    if (isBackward && argName.starts_with("saved.")) {
      // The forward's value of the same name: a forward argument or output
      // (read from the args) or an arena buffer kept since the forward.
      std::optional<unsigned> result;
      for (unsigned r = 0; r < forward.getNumResults(); ++r)
        if (forward.getResultName(r) == argName)
          result = r;
      if (!result)
        return graph.emitOpError() << "argument '" << argName
                                   << "' is not a result of the forward graph";
      Value saved = forward.getReturnOp().getOperand(*result);
      saved = resolveView(saved);
      if (packedValues.contains(saved))
        packedValues.insert(arg);
      // Copy before inserting: operator[] may grow the map and move the
      // found entry.
      if (auto it = pointers.find(saved); it != pointers.end()) {
        std::string pointer = it->second;
        pointers[arg] = pointer;
      } else if (const ArenaBuffer *buffer = plan.lookup(saved))
        pointers[arg] =
            "(ctx->arena + " + std::to_string(buffer->offset) + "ULL)";
      else if (const ArenaBuffer *buffer = plan.lookup(arg))
        pointers[arg] =
            "(ctx->arena + " + std::to_string(buffer->offset) + "ULL)";
      else
        return graph.emitOpError()
               << "saved tensor '" << argName << "' has no arena buffer";
      continue;
    }
    pointers[arg] = "args->" + identifier(argName);
  }
  // Results written straight into their fields where possible.
  SmallVector<std::pair<std::string, Value>> copies;
  ReturnOp ret = graph.getReturnOp();
  for (unsigned r = 0; r < graph.getNumResults(); ++r) {
    StringRef resultName = graph.getResultName(r);
    if (resultName.starts_with("saved."))
      continue;
    Value value = ret.getOperand(r);
    Value root = value;
    root = resolveView(root);
    std::string field = "args->" + identifier(resultName);
    if (llvm::isa<OpResult>(root) && !pointers.count(root))
      pointers[root] = field;
    else
      copies.emplace_back(field, root);
  }
  (void)fields;

  for (Operation &op : body.without_terminator()) {
    if (auto rename = llvm::dyn_cast<RenameOp>(op)) {
      FailureOr<std::string> pointer = pointerOf(rename.getInput(), &op);
      if (failed(pointer))
        return failure();
      pointers[rename.getResult()] = *pointer;
      if (packedValues.contains(rename.getInput()))
        packedValues.insert(rename.getResult());
      continue;
    }
    auto kernel = llvm::dyn_cast<KernelOp>(op);
    if (!kernel)
      return op.emitOpError()
             << "is not inside a sluice.kernel; run --sluice-fuse before code "
                "generation";
    // Per-kernel times for sluice_profile: a steady clock on the CPU, a
    // pair of events on the stream for CUDA (no synchronisation here).
    std::vector<std::string> &profiled = profiledKernels[isBackward ? 1 : 0];
    std::string slot = std::to_string(isBackward ? 1 : 0) + ", " +
                       std::to_string(profiled.size());
    profiled.push_back(describeKernel(kernel));
    os << "  SLUICE_PROFILE_BEGIN(" << slot << ");\n";
    if (failed(kernel.getKind() == KernelKind::gemm ? emitGemm(kernel, os)
                                                    : emitFused(kernel, os)))
      return failure();
    os << "  SLUICE_PROFILE_END(" << slot << ");\n";
  }
  for (auto &[field, value] : copies) {
    FailureOr<std::string> source = pointerOf(value, ret);
    if (failed(source))
      return failure();
    uint64_t bytes =
        *llvm::cast<NamedTensorType>(value.getType()).getNumBytes();
    if (isCuda())
      os << "  SLUICE_CHECK_CUDA(cudaMemcpyAsync((void *)" << field
         << ", (const void *)(" << *source << "), " << bytes
         << "ULL, cudaMemcpyDeviceToDevice, stream), \"copy into " << field
         << "\");\n";
    else
      os << "  memcpy((void *)" << field << ", (const void *)(" << *source
         << "), " << bytes << "ULL);\n";
  }
  return success();
}

std::string ModuleEmitter::fieldsOf(ArrayRef<Field> fields,
                                    bool inputsConst) const {
  std::string text;
  for (const Field &f : fields)
    text += std::string("  ") + (f.output || !inputsConst ? "" : "const ") +
            "void *" + f.ident + "; /* " + f.name + " */\n";
  return text;
}

std::string ModuleEmitter::header() const {
  std::string guard =
      "SLUICE_MODULE_" + StringRef(name).upper() + (isCuda() ? "_H" : "_CPU_H");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* Generated by sluicec: the C ABI of module '" << name << "' ("
     << (isCuda() ? "CUDA" : "portable C++") << "). docs/Codegen.md. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n";
  if (isCuda())
    os << "#define SLUICE_RUNTIME_CUDA 1\n";
  os << "#include <stdint.h>\n#include \"sluice_runtime.h\"\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "typedef struct sluice_" << name << "_context sluice_" << name
     << "_context;\n"
     << "/* Allocates the arena and library handles. On failure *ctx is NULL "
        "or a context whose last_error says why (destroy it). */\n"
     << "int sluice_" << name << "_create(sluice_" << name
     << "_context **ctx);\n"
     << "void sluice_" << name << "_destroy(sluice_" << name
     << "_context *ctx);\n"
     << "const char *sluice_" << name << "_last_error(const sluice_" << name
     << "_context *ctx);\n\n"
     << "typedef struct {\n"
     << fieldsOf(forwardFields, true) << "  uint64_t seed;\n} sluice_" << name
     << "_forward_args;\n"
     << "int sluice_" << name << "_forward(sluice_" << name
     << "_context *ctx, const sluice_" << name
     << "_forward_args *args, sluice_stream_t stream);\n";
  if (backward)
    os << "\n/* One forward, then its backward, per context: the saved "
          "tensors stay in the context's arena between them. */\n"
       << "typedef struct {\n"
       << fieldsOf(backwardFields, true) << "  uint64_t seed;\n} sluice_"
       << name << "_backward_args;\n"
       << "int sluice_" << name << "_backward(sluice_" << name
       << "_context *ctx, const sluice_" << name
       << "_backward_args *args, sluice_stream_t stream);\n";
  os << "\n/* Generic entry points, for runners that dlopen the module. */\n"
     << "const char *sluice_module_name(void);\n"
     << "int sluice_num_phases(void);\n"
     << "int sluice_num_tensors(int phase);\n"
     << "const sluice_tensor_info *sluice_tensor(int phase, int index);\n"
     << "int sluice_create(void **ctx);\n"
     << "void sluice_destroy(void *ctx);\n"
     << "const char *sluice_last_error(const void *ctx);\n"
     << "int sluice_run(void *ctx, int phase, void *const *tensors, uint64_t "
        "seed, sluice_stream_t stream);\n"
     << "/* Only in a module compiled with -DSLUICE_PROFILE: per-kernel times "
        "(ms) of the\n   last run of `phase` on `ctx` (CUDA: events around "
        "each "
        "kernel; CPU: a steady\n   clock); fills at most `capacity` entries, "
        "returns the number of kernels, or -1\n   before any run. */\n"
     << "int sluice_profile(const void *ctx, int phase, int capacity, const "
        "char **names,\n                   double *milliseconds);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return text;
}

std::string ModuleEmitter::source(StringRef phases) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string ctxType = "sluice_" + name + "_context";
  uint64_t arenaBytes = plan.peakBytes;
  os << "// Generated by sluicec: module '" << name << "' for "
     << (isCuda() ? "CUDA (nvcc -shared -Xcompiler -fPIC ... -lcublasLt "
                    "-lcublas)"
                  : "the host C++ compiler (c++ -O2 -shared -fPIC "
                    "[-fopenmp] [-DSLUICE_HAVE_CBLAS -lopenblas])")
     << ".\n"
     << "#include \"" << (isCuda() ? fileStem + ".h" : fileStem + "_cpu.h")
     << "\"\n"
     << "#include \"Philox.h\"\n#include \"sluice_host.h\"\n"
     << "#include \"sluice_kernels.h\"\n";
  if (isCuda())
    os << "#include <cublasLt.h>\n#include <cublas_v2.h>\n"
          "#include <cuda_runtime.h>\n";
  else
    os << "#include \"sluice_cpu_gemm.h\"\n";
  os << "#include <stdarg.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
        "#include <string.h>\n\n";
  os << "struct " << ctxType << " {\n  char *arena;\n  char *scratch;\n";
  if (isCuda())
    os << "  cublasHandle_t blas;\n  cublasLtHandle_t lt;\n"
          "  void *workspace;\n  size_t workspace_bytes;\n"
       << contextFields;
  size_t slots = std::max<size_t>(
      {profiledKernels[0].size(), profiledKernels[1].size(), size_t(1)});
  if (isCuda())
    os << "  cudaEvent_t events[2][" << 2 * slots << "];\n";
  else
    os << "  double profile_ms[2][" << slots << "];\n";
  os << "  int profiled[2];\n";
  os << "  char error[1024];\n};\n\n"
     << "static char sluice_create_error[256];\n\n"
     << "static int sluice_fail(" << ctxType
     << " *ctx, int status, const char *format, ...) {\n"
        "  va_list list;\n  va_start(list, format);\n"
        "  vsnprintf(ctx->error, sizeof(ctx->error), format, list);\n"
        "  va_end(list);\n  return status;\n}\n\n";
  os << kernelText;

  // create / destroy / last_error.
  os << "extern \"C\" void sluice_" << name << "_destroy(" << ctxType
     << " *ctx) {\n  if (!ctx)\n    return;\n";
  if (isCuda())
    os << destroyText
       << "  for (int p = 0; p < 2; ++p)\n    for (int i = 0; i < " << 2 * slots
       << "; ++i)\n      if (ctx->events[p][i]) "
          "cudaEventDestroy(ctx->events[p][i]);\n"
       << "  if (ctx->lt) cublasLtDestroy(ctx->lt);\n"
          "  if (ctx->blas) cublasDestroy(ctx->blas);\n"
          "  cudaFree(ctx->workspace);\n  cudaFree(ctx->scratch);\n"
          "  cudaFree(ctx->arena);\n";
  else
    os << "  free(ctx->scratch);\n  free(ctx->arena);\n";
  os << "  free(ctx);\n}\n\n";
  os << "extern \"C\" int sluice_" << name << "_create(" << ctxType
     << " **out) {\n  const char *phase = \"sluice_" << name
     << "_create\";\n  if (!out)\n    return SLUICE_ERROR_ARGUMENT;\n"
     << "  " << ctxType << " *ctx = (" << ctxType << " *)calloc(1, sizeof("
     << ctxType << "));\n  *out = ctx;\n"
     << "  if (!ctx) {\n    snprintf(sluice_create_error, "
        "sizeof(sluice_create_error), \"%s: cannot allocate the context\", "
        "phase);\n    return SLUICE_ERROR_ALLOC;\n  }\n";
  if (isCuda()) {
    os << "  cudaError_t e;\n";
    auto alloc = [&](StringRef field, uint64_t bytes) {
      if (!bytes)
        return;
      os << "  e = cudaMalloc((void **)&ctx->" << field << ", " << bytes
         << "ULL);\n  if (e != cudaSuccess)\n    return sluice_fail(ctx, "
            "SLUICE_ERROR_ALLOC, \"%s: cudaMalloc of the "
         << field << " (" << bytes << " bytes): %s\", phase, "
         << "cudaGetErrorString(e));\n";
    };
    alloc("arena", arenaBytes);
    alloc("scratch", scratchBytes);
    os << "  ctx->workspace_bytes = 32u << 20;\n";
    alloc("workspace", 32u << 20);
    os << "  SLUICE_CHECK_CUBLAS(cublasCreate(&ctx->blas), "
          "\"cublasCreate\");\n"
          "  SLUICE_CHECK_CUBLAS(cublasLtCreate(&ctx->lt), "
          "\"cublasLtCreate\");\n"
       << createText
       << "  for (int p = 0; p < 2; ++p)\n    for (int i = 0; i < " << 2 * slots
       << "; ++i) {\n      e = cudaEventCreate(&ctx->events[p][i]);\n"
          "      if (e != cudaSuccess)\n        return sluice_fail(ctx, "
          "SLUICE_ERROR_CUDA, \"%s: cudaEventCreate: %s\", phase, "
          "cudaGetErrorString(e));\n    }\n";
  } else {
    auto alloc = [&](StringRef field, uint64_t bytes) {
      if (!bytes)
        return;
      uint64_t rounded = (bytes + 255) / 256 * 256;
      os << "  ctx->" << field << " = (char *)aligned_alloc(256, " << rounded
         << "ULL);\n  if (!ctx->" << field
         << ")\n    return sluice_fail(ctx, SLUICE_ERROR_ALLOC, \"%s: cannot "
            "allocate the "
         << field << " (" << rounded << " bytes)\", phase);\n";
    };
    alloc("arena", arenaBytes);
    alloc("scratch", scratchBytes);
  }
  os << "  (void)phase;\n  return SLUICE_OK;\n}\n\n";
  os << "extern \"C\" const char *sluice_" << name << "_last_error(const "
     << ctxType
     << " *ctx) {\n  return ctx ? ctx->error : "
        "sluice_create_error;\n}\n\n";
  os << phases;

  // The generic entry points.
  os << "extern \"C\" const char *sluice_module_name(void) { return \"" << name
     << "\"; }\n"
     << "extern \"C\" int sluice_num_phases(void) { return "
     << (backward ? 2 : 1) << "; }\n";
  auto table = [&](ArrayRef<Field> fields, int phase) {
    for (auto [index, f] : llvm::enumerate(fields)) {
      if (f.type.getRank() == 0)
        continue;
      os << "static const int64_t sluice_dims_" << phase << "_" << index
         << "[] = {";
      for (auto [i, size] : llvm::enumerate(f.type.getSizes()))
        os << (i ? ", " : "") << size << "LL";
      os << "};\n";
    }
    os << "static const sluice_tensor_info sluice_tensors_" << phase
       << "[] = {\n";
    for (auto [index, f] : llvm::enumerate(fields))
      os << "  {\"" << f.name << "\", " << dtypeCode(f.type.getElementType())
         << ", " << f.type.getRank() << ", "
         << (f.type.getRank() ? "sluice_dims_" + std::to_string(phase) + "_" +
                                    std::to_string(index)
                              : std::string("NULL"))
         << ", " << (f.output ? 1 : 0) << "},\n";
    os << "};\n";
  };
  table(forwardFields, 0);
  if (backward)
    table(backwardFields, 1);
  os << "extern \"C\" int sluice_num_tensors(int phase) {\n"
     << "  if (phase == 0) return " << forwardFields.size() << ";\n";
  if (backward)
    os << "  if (phase == 1) return " << backwardFields.size() << ";\n";
  os << "  return 0;\n}\n"
     << "extern \"C\" const sluice_tensor_info *sluice_tensor(int phase, int "
        "index) {\n"
     << "  if (phase == 0 && index >= 0 && index < " << forwardFields.size()
     << ") return &sluice_tensors_0[index];\n";
  if (backward)
    os << "  if (phase == 1 && index >= 0 && index < " << backwardFields.size()
       << ") return &sluice_tensors_1[index];\n";
  os << "  return NULL;\n}\n"
     << "extern \"C\" int sluice_create(void **ctx) { return sluice_" << name
     << "_create((" << ctxType << " **)ctx); }\n"
     << "extern \"C\" void sluice_destroy(void *ctx) { sluice_" << name
     << "_destroy((" << ctxType << " *)ctx); }\n"
     << "extern \"C\" const char *sluice_last_error(const void *ctx) { return "
        "sluice_"
     << name << "_last_error((const " << ctxType << " *)ctx); }\n"
     << "extern \"C\" int sluice_run(void *opaque, int phase, void *const "
        "*tensors, uint64_t seed, sluice_stream_t stream) {\n"
     << "  " << ctxType << " *ctx = (" << ctxType << " *)opaque;\n"
     << "  if (!ctx)\n    return SLUICE_ERROR_ARGUMENT;\n"
     << "  if (!tensors)\n    return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, "
        "\"sluice_run: tensors is NULL\");\n";
  auto dispatch = [&](ArrayRef<Field> fields, int phase, StringRef entry) {
    os << "  if (phase == " << phase << ") {\n    sluice_" << name << "_"
       << entry << "_args args;\n";
    for (auto [index, f] : llvm::enumerate(fields))
      os << "    args." << f.ident << " = tensors[" << index << "];\n";
    os << "    args.seed = seed;\n    return sluice_" << name << "_" << entry
       << "(ctx, &args, stream);\n  }\n";
  };
  dispatch(forwardFields, 0, "forward");
  if (backward)
    dispatch(backwardFields, 1, "backward");
  os << "  return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, \"sluice_run: phase "
        "%d is not one of this module's "
     << (backward ? 2 : 1) << " phases\", phase);\n}\n";
  // sluice_profile: the times of the last run of a phase, per kernel.
  os << "#ifdef SLUICE_PROFILE\n";
  for (int phase = 0; phase < 2; ++phase) {
    os << "static const char *const sluice_kernel_names_" << phase << "[] = {";
    for (const std::string &label : profiledKernels[phase])
      os << "\n  \"" << label << "\",";
    os << "\n  \"\"};\n";
  }
  os << "extern \"C\" int sluice_profile(const void *opaque, int phase, int "
        "capacity, const char **names, double *milliseconds) {\n"
     << "  const " << ctxType << " *ctx = (const " << ctxType << " *)opaque;\n"
     << "  if (!ctx || phase < 0 || phase >= " << (backward ? 2 : 1)
     << " || !ctx->profiled[phase])\n    return -1;\n"
     << "  const char *const *table = phase == 0 ? sluice_kernel_names_0 : "
        "sluice_kernel_names_1;\n"
     << "  int count = phase == 0 ? " << profiledKernels[0].size() << " : "
     << profiledKernels[1].size() << ";\n"
     << "  for (int i = 0; i < count && i < capacity; ++i) {\n"
        "    if (names)\n      names[i] = table[i];\n"
        "    if (!milliseconds)\n      continue;\n";
  if (isCuda())
    os << "    float ms = 0.0f;\n"
          "    if (cudaEventSynchronize(ctx->events[phase][2 * i + 1]) != "
          "cudaSuccess ||\n        cudaEventElapsedTime(&ms, "
          "ctx->events[phase][2 * i], ctx->events[phase][2 * i + 1]) != "
          "cudaSuccess)\n      return -1;\n"
          "    milliseconds[i] = ms;\n";
  else
    os << "    milliseconds[i] = ctx->profile_ms[phase][i];\n";
  os << "  }\n  return count;\n}\n#endif\n";
  return text;
}

FailureOr<EmittedModule> ModuleEmitter::run() {
  if (failed(collect()))
    return failure();
  FailureOr<MemoryPlan> planned = planMemory(module);
  if (failed(planned))
    return failure();
  plan = std::move(*planned);

  std::string phases;
  llvm::raw_string_ostream ps(phases);
  auto entry = [&](GraphOp graph, bool isBackward) -> LogicalResult {
    StringRef which = isBackward ? "backward" : "forward";
    ArrayRef<Field> fields = isBackward ? backwardFields : forwardFields;
    std::string fn = "sluice_" + name + "_" + which.str();
    ps << "extern \"C\" int " << fn << "(sluice_" << name
       << "_context *ctx, const sluice_" << name << "_" << which
       << "_args *args, sluice_stream_t stream_) {\n"
       << "  const char *phase = \"" << fn << "\";\n"
       << "  if (!ctx)\n    return SLUICE_ERROR_ARGUMENT;\n"
       << "  if (!args)\n    return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, "
          "\"%s: args is NULL\", phase);\n";
    for (const Field &f : fields)
      ps << "  if (!args->" << f.ident
         << ")\n    return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, \"%s: "
            "tensor '"
         << f.name << "' (args->" << f.ident << ") is NULL\", phase);\n";
    if (isCuda())
      ps << "  cudaStream_t stream = (cudaStream_t)stream_;\n";
    else
      ps << "  (void)stream_;\n";
    if (failed(emitPhase(graph, isBackward, ps)))
      return failure();
    ps << "  ctx->profiled[" << (isBackward ? 1 : 0)
       << "] = 1;\n  return SLUICE_OK;\n}\n\n";
    return success();
  };
  if (failed(entry(forward, false)) ||
      (backward && failed(entry(backward, true))))
    return failure();

  EmittedModule result;
  result.moduleName = name;
  result.sourceFile = isCuda() ? fileStem + ".cu" : fileStem + "_cpu.cpp";
  result.headerFile = isCuda() ? fileStem + ".h" : fileStem + "_cpu.h";
  result.files.push_back(EmittedFile{result.sourceFile, source(phases)});
  result.files.push_back(EmittedFile{result.headerFile, header()});
  result.files.push_back({"sluice_runtime.h", kRuntimeHeader});
  result.files.push_back({"sluice_host.h", kHostHeader});
  result.files.push_back({"sluice_kernels.h", kKernelsHeader});
  result.files.push_back({"Philox.h", kPhiloxHeader});
  if (!isCuda())
    result.files.push_back({"sluice_cpu_gemm.h", kCpuGemmHeader});
  return result;
}

FailureOr<EmittedModule>
mlir::sluice::emitModule(ModuleOp module, EmitTarget target, StringRef name) {
  return ModuleEmitter(module, target, name).run();
}
