//===- PrintAttention.cpp - sluice_exec.attention for both targets --------===//
//
// A streaming attention prints as one block that fills the args struct of
// include/sluice/Runtime/sluice_stream.h from the op's attributes (every
// size, stride and counter stride a literal) and calls the runtime kernel
// of the target: `sluice_stream_attention_{fwd,bwd}_cpu<T, BM, BN>` in C++,
// `sluice_stream_attention_{fwd,bwd}_cuda<T, WARPS, ...>` on CUDA, whose
// launch error is checked.
//
//===----------------------------------------------------------------------===//

#include "sluice/Target/Translate.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::target;

namespace {
/// `value` as an exact C double literal.
std::string hexDouble(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%a", value);
  return text;
}

/// The args fields of the op's pointers, in operand order.
ArrayRef<StringRef> fieldNames(exec::AttentionOp op) {
  static const StringRef forward[] = {"q", "k", "v", "o", "lse"};
  static const StringRef backward[] = {"q", "k",  "v",  "d_o", "lse",
                                       "d", "dq", "dk", "dv"};
  // O in D's place: the kernels compute D from it (sluice_stream.h).
  static const StringRef backwardFromO[] = {"q", "k",  "v",  "d_o", "lse",
                                            "o", "dq", "dk", "dv"};
  if (op.getBackward())
    return op.getRowDotFromO() ? backwardFromO : backward;
  return ArrayRef<StringRef>(forward).take_front(op.getInputs().size() +
                                                 op.getOutputs().size());
}

/// `a.p`: sizes, scale, mask, dropout and its counter strides.
void printProblem(raw_indented_ostream &os, exec::AttentionOp op) {
  ArrayRef<int64_t> batch = op.getBatch(), counter = op.getCounter();
  os << "a.p.batch_rank = " << batch.size() << ";\n";
  for (auto [index, size] : llvm::enumerate(batch))
    os << "a.p.batch[" << index << "] = " << size << "LL;\n";
  if (op.getGroup() != 0)
    os << "a.p.group_rank = " << op.getGroup() << ";\n";
  os << "a.p.m = " << op.getM() << "LL;\n"
     << "a.p.n = " << op.getN() << "LL;\n"
     << "a.p.d = " << op.getD() << "LL;\n"
     << "a.p.e = " << op.getE() << "LL;\n"
     << "a.p.scale = " << hexFloat(op.getScale().convertToDouble()) << ";\n"
     << "a.p.causal = " << (op.getCausal() ? 1 : 0) << ";\n"
     << "a.p.dropout_p = " << hexDouble(op.getDropout().convertToDouble())
     << ";\n"
     << "a.p.seed = args->seed;\n"
     << "a.p.stream = " << op.getStream() << "ULL;\n";
  for (size_t b = 0; b < batch.size(); ++b)
    os << "a.p.counter_batch[" << b << "] = " << counter[b] << "LL;\n";
  os << "a.p.counter_row = " << counter[batch.size()] << "LL;\n"
     << "a.p.counter_col = " << counter[batch.size() + 1] << "LL;\n";
}

/// `a.<field>` for every pointer: its address and element strides.
LogicalResult printOperands(raw_indented_ostream &os, exec::AttentionOp op) {
  size_t rank = op.getBatch().size();
  SmallVector<Value> pointers(op.getInputs());
  llvm::append_range(pointers, op.getOutputs());
  SmallVector<int64_t> offsets(pointers.size(), 0);
  if (std::optional<ArrayRef<int64_t>> given = op.getOffsets())
    offsets.assign(given->begin(), given->end());
  for (auto [field, pointer, attr, offset] :
       llvm::zip_equal(fieldNames(op), pointers, op.getStrides(), offsets)) {
    FailureOr<std::string> address = HostEmitter::pointer(pointer);
    if (failed(address))
      return failure();
    ArrayRef<int64_t> strides = llvm::cast<DenseI64ArrayAttr>(attr);
    os << "a." << field << ".data = (void *)(";
    // A slice of a stacked tensor: its first element, in elements of the
    // operand's type (only Q, K and V are sliced; they have `element`).
    if (offset != 0)
      os << "(" << storageType(op.getElement()) << " *)(" << *address << ") + "
         << offset << "LL";
    else
      os << *address;
    os << ");\n";
    for (size_t b = 0; b < rank; ++b)
      os << "a." << field << ".batch_stride[" << b << "] = " << strides[b]
         << "LL;\n";
    os << "a." << field << ".row_stride = " << strides[rank] << "LL;\n"
       << "a." << field << ".col_stride = " << strides[rank + 1] << "LL;\n";
  }
  return success();
}

/// The runtime function and its template arguments (`sluice_stream_
/// attention_fwd_cuda<T, ...>`, without the call's arguments).
FailureOr<std::string> kernelFunction(exec::AttentionOp op, bool cuda) {
  exec::StreamTilesAttr tiles = op.getTiles();
  std::string name = "sluice_stream_attention_";
  name += op.getBackward() ? "bwd" : "fwd";
  name += cuda ? "_cuda<" : "_cpu<";
  name += storageType(op.getElement());
  auto add = [&](int64_t value) { name += ", " + std::to_string(value); };
  if (!cuda) {
    if (tiles.getThreads() != 1 || tiles.getKeyRows() != tiles.getKeyTile() ||
        tiles.getQueryTile() != tiles.getQueryRows())
      return op.emitOpError()
             << "has tiles the C++ kernels do not take (one thread; key_rows "
                "= key_tile, query_tile = query_rows)";
    add(tiles.getQueryRows());
    add(tiles.getKeyTile());
    return name + ">";
  }
  int64_t warps = tiles.getThreads() / 32, headDim = tiles.getHeadDim();
  if (tiles.getThreads() % 32 || tiles.getQueryRows() != 16 * warps ||
      tiles.getKeyRows() != 16 * warps || headDim == 0 ||
      tiles.getKeyTile() % 16 || tiles.getQueryTile() % 16 ||
      op.getD() > headDim || op.getE() > headDim)
    return op.emitOpError()
           << "has tiles the CUDA kernels do not take (whole warps of 16 rows, "
              "tiles of whole 16-steps, d and e within head_dim)";
  add(warps);
  add(tiles.getKeyTile());
  if (op.getBackward())
    add(tiles.getQueryTile());
  add(headDim);
  return name + ">";
}

/// CUDA, at create: the device must give a block the shared memory the
/// op's kernels ask for (a module runs on any GPU of its compute
/// capability's major version, whose per-block limits differ).
void printSharedMemoryCheck(HostEmitter &emitter, exec::AttentionOp op,
                            StringRef function) {
  raw_indented_ostream &os = emitter.create();
  os << "// " << op.getLabel()
     << ": the GPU must give a block its shared memory\n{\n";
  os.indent() << "int device_ = 0, optin_ = 0;\n"
              << "SLUICE_CHECK_CUDA(cudaGetDevice(&device_), "
                 "\"cudaGetDevice\");\n"
              << "SLUICE_CHECK_CUDA(cudaDeviceGetAttribute(&optin_, "
                 "cudaDevAttrMaxSharedMemoryPerBlockOptin, device_), "
                 "\"cudaDeviceGetAttribute\");\n"
              << "const int needed_ = "
              << function.take_until([](char c) { return c == '<'; }) << "_smem"
              << function.drop_until([](char c) { return c == '<'; }) << "();\n"
              << "if (needed_ > optin_)\n"
              << "  return sluice_fail(ctx, SLUICE_ERROR_UNSUPPORTED, \"%s: %s "
                 "(streaming attention) needs %d bytes of shared memory per "
                 "block and this GPU lets a block use %d: compile the module "
                 "for this GPU's architecture (sluicec --cuda-arch)\", "
                 "phase, \""
              << op.getLabel() << "\", needed_, optin_);\n";
  os.unindent() << "}\n";
}
} // namespace

LogicalResult mlir::sluice::target::printAttention(HostEmitter &emitter,
                                                   exec::AttentionOp op,
                                                   bool cuda) {
  FailureOr<std::string> function = kernelFunction(op, cuda);
  if (failed(function))
    return failure();
  std::string call = *function + (cuda ? "(a, stream)" : "(a);");
  if (cuda)
    printSharedMemoryCheck(emitter, op, *function);
  raw_indented_ostream &os = emitter.body();
  os << "// " << op.getLabel() << ": streaming attention, "
     << (op.getBackward() ? "backward" : "forward") << "\n{\n";
  os.indent() << "sluice_stream_" << (op.getBackward() ? "bwd" : "fwd")
              << "_args a;\n"
              << "memset(&a, 0, sizeof(a));\n";
  printProblem(os, op);
  if (failed(printOperands(os, op)))
    return failure();
  if (cuda)
    os << "SLUICE_CHECK_CUDA((" << call << "), \"" << op.getLabel() << "\");\n";
  else
    os << call << "\n";
  os.unindent() << "}\n";
  return success();
}
