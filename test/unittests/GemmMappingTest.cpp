//===- GemmMappingTest.cpp - contractions as strided-batched GEMMs --------===//
//
// The mapping's numbers for the contractions of a transformer layer, the
// epilogue legality helpers, and the proof: on random contractions, a naive
// column-major strided-batched GEMM run with the mapping's parameters on the
// row-major buffers equals an einsum by names, and so does the C++
// backend's sluice_cpu_gemm given the same parameters. Then
// --sluice-legalize-contractions: every random contraction maps afterwards,
// and the reference interpreter gives the same results before and after.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/GemmMapping.h"
#include "sluice/Interpreter/Interpreter.h"
#include "sluice/Runtime/sluice_cpu_gemm.h"
#include "sluice/Spec/EncoderBuilder.h"

#include "dialects/sluice/SluiceDialect.h"
#include "dialects/sluice/SluicePasses.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::sluice;

namespace {

class GemmMappingTest : public ::testing::Test {
protected:
  GemmMappingTest() {
    context
        .loadDialect<SluiceDialect, arith::ArithDialect, math::MathDialect>();
  }

  /// "[b=2, j=4]" -> the f32 tensor type.
  NamedTensorType tensor(StringRef dims) {
    Type type =
        parseType(("!sluice.tensor<" + dims + ", f32>").str(), &context);
    EXPECT_TRUE(type) << dims.str();
    return llvm::dyn_cast_or_null<NamedTensorType>(type);
  }

  /// The mapping of lhs x rhs -> result given as dimension lists.
  FailureOr<GemmMapping> map(StringRef lhs, StringRef rhs, StringRef result,
                             double scale = 1.0) {
    return mapContraction(tensor(lhs), tensor(rhs), tensor(result), scale);
  }

  /// Parses a module, failing the test if it does not parse.
  OwningOpRef<ModuleOp> parse(StringRef source) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << "cannot parse:\n" << source.str();
    return module;
  }

  MLIRContext context;
};

using Names = SmallVector<std::string>;

//===----------------------------------------------------------------------===//
// Mapping numbers
//===----------------------------------------------------------------------===//

// Row-major C[j][u] = X[j][i] W[i][u]: cuBLAS computes C^T = W^T X^T, so A
// is the rhs, and nothing is transposed.
TEST_F(GemmMappingTest, PlainMatmulRowMajor) {
  FailureOr<GemmMapping> g = map("[j=4, i=8]", "[i=8, u=16]", "[j=4, u=16]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_FALSE(g->aIsLhs);
  EXPECT_EQ(g->m, 16);
  EXPECT_EQ(g->n, 4);
  EXPECT_EQ(g->k, 8);
  EXPECT_FALSE(g->transA);
  EXPECT_FALSE(g->transB);
  EXPECT_EQ(g->lda, 16);
  EXPECT_EQ(g->ldb, 8);
  EXPECT_EQ(g->ldc, 16);
  EXPECT_EQ(g->batchCount, 1);
  EXPECT_EQ(g->strideA, 0);
  EXPECT_EQ(g->strideB, 0);
  EXPECT_EQ(g->strideC, 0);
  EXPECT_EQ(g->mDims, Names({"u"}));
  EXPECT_EQ(g->nDims, Names({"j"}));
  EXPECT_EQ(g->kDims, Names({"i"}));
  EXPECT_TRUE(g->batchDims.empty());
}

// The transposed result C[u][j]: the lhs's free dimension is now innermost
// in C, so A is the lhs, and both operands are read transposed.
TEST_F(GemmMappingTest, PlainMatmulTransposedResult) {
  FailureOr<GemmMapping> g = map("[j=4, i=8]", "[i=8, u=16]", "[u=16, j=4]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_TRUE(g->aIsLhs);
  EXPECT_EQ(g->m, 4);
  EXPECT_EQ(g->n, 16);
  EXPECT_EQ(g->k, 8);
  EXPECT_TRUE(g->transA);
  EXPECT_TRUE(g->transB);
  EXPECT_EQ(g->lda, 8);
  EXPECT_EQ(g->ldb, 16);
  EXPECT_EQ(g->ldc, 4);
  EXPECT_EQ(g->mDims, Names({"j"}));
  EXPECT_EQ(g->nDims, Names({"u"}));
}

// q_proj of BERT: x[b, j, i] x wq[h, p, i] -> [b, j, h, p]. (b, j) and
// (h, p) collapse into n = b*j and m = h*p: one GEMM, no batch.
TEST_F(GemmMappingTest, BertProjection) {
  FailureOr<GemmMapping> g =
      map("[b=2, j=3, i=8]", "[h=2, p=4, i=8]", "[b=2, j=3, h=2, p=4]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_FALSE(g->aIsLhs);
  EXPECT_EQ(g->m, 8);
  EXPECT_EQ(g->n, 6);
  EXPECT_EQ(g->k, 8);
  EXPECT_TRUE(g->transA);
  EXPECT_FALSE(g->transB);
  EXPECT_EQ(g->lda, 8);
  EXPECT_EQ(g->ldb, 8);
  EXPECT_EQ(g->ldc, 8);
  EXPECT_EQ(g->batchCount, 1);
  EXPECT_EQ(g->mDims, Names({"h", "p"}));
  EXPECT_EQ(g->nDims, Names({"b", "j"}));
  EXPECT_EQ(g->kDims, Names({"i"}));
}

// out_proj: [b, j, h, p] x wo[i, h, p] -> [b, j, i]: k = (h, p).
TEST_F(GemmMappingTest, BertOutputProjection) {
  FailureOr<GemmMapping> g =
      map("[b=2, j=3, h=2, p=4]", "[i=8, h=2, p=4]", "[b=2, j=3, i=8]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_FALSE(g->aIsLhs);
  EXPECT_EQ(g->m, 8);
  EXPECT_EQ(g->n, 6);
  EXPECT_EQ(g->k, 8);
  EXPECT_TRUE(g->transA);
  EXPECT_FALSE(g->transB);
  EXPECT_EQ(g->lda, 8);
  EXPECT_EQ(g->ldb, 8);
  EXPECT_EQ(g->kDims, Names({"h", "p"}));
}

// q.k^T: the batch (b, h) is split by j in q and by k in k, so no single
// strided-batched GEMM computes it.
TEST_F(GemmMappingTest, AttentionScoresNeedRelayout) {
  EXPECT_TRUE(failed(map("[b=2, j=4, h=2, p=8]", "[b=2, k=4, h=2, p=8]",
                         "[b=2, h=2, j=4, k=4]", 0.125)));
}

// The same after legalization: q[b, h, j, p] x k[b, h, k, p]: a batch of
// b*h GEMMs with one stride per tensor; alpha is the scale.
TEST_F(GemmMappingTest, AttentionScoresBatched) {
  FailureOr<GemmMapping> g = map("[b=2, h=3, j=4, p=8]", "[b=2, h=3, k=5, p=8]",
                                 "[b=2, h=3, j=4, k=5]", 0.125);
  ASSERT_TRUE(succeeded(g));
  EXPECT_FALSE(g->aIsLhs);
  EXPECT_EQ(g->m, 5);
  EXPECT_EQ(g->n, 4);
  EXPECT_EQ(g->k, 8);
  EXPECT_TRUE(g->transA);
  EXPECT_FALSE(g->transB);
  EXPECT_EQ(g->lda, 8);
  EXPECT_EQ(g->ldb, 8);
  EXPECT_EQ(g->ldc, 5);
  EXPECT_EQ(g->batchCount, 6);
  EXPECT_EQ(g->strideA, 5 * 8);
  EXPECT_EQ(g->strideB, 4 * 8);
  EXPECT_EQ(g->strideC, 4 * 5);
  EXPECT_EQ(g->alpha, 0.125);
  EXPECT_EQ(g->batchDims, Names({"b", "h"}));
}

// The batch need not be outermost: C[j, b, k] has ldc = b*k and batch
// stride k.
TEST_F(GemmMappingTest, BatchInTheMiddle) {
  FailureOr<GemmMapping> g =
      map("[b=2, j=3, p=4]", "[b=2, k=5, p=4]", "[j=3, b=2, k=5]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_EQ(g->ldc, 10);
  EXPECT_EQ(g->strideC, 5);
  EXPECT_EQ(g->batchCount, 2);
}

// Weight gradients contract over (b, j): ffn2.grad_rhs
// act[b, j, u] x dy[b, j, i] -> d_w2[i, u].
TEST_F(GemmMappingTest, WeightGradientOverBatchAndSequence) {
  FailureOr<GemmMapping> g =
      map("[b=2, j=3, u=16]", "[b=2, j=3, i=8]", "[i=8, u=16]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_TRUE(g->aIsLhs);
  EXPECT_EQ(g->m, 16);
  EXPECT_EQ(g->n, 8);
  EXPECT_EQ(g->k, 6);
  EXPECT_FALSE(g->transA);
  EXPECT_TRUE(g->transB);
  EXPECT_EQ(g->lda, 16);
  EXPECT_EQ(g->ldb, 8);
  EXPECT_EQ(g->ldc, 16);
  EXPECT_EQ(g->kDims, Names({"b", "j"}));
}

// q_proj.grad_rhs: x[b, j, i] x dq[b, j, h, p] -> d_wq[h, p, i].
TEST_F(GemmMappingTest, WeightGradientOfHeadProjection) {
  FailureOr<GemmMapping> g =
      map("[b=2, j=3, i=8]", "[b=2, j=3, h=2, p=4]", "[h=2, p=4, i=8]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_TRUE(g->aIsLhs);
  EXPECT_EQ(g->m, 8);
  EXPECT_EQ(g->n, 8);
  EXPECT_EQ(g->k, 6);
  EXPECT_FALSE(g->transA);
  EXPECT_TRUE(g->transB);
  EXPECT_EQ(g->lda, 8);
  EXPECT_EQ(g->ldb, 8);
  EXPECT_EQ(g->ldc, 8);
  EXPECT_EQ(g->mDims, Names({"i"}));
  EXPECT_EQ(g->nDims, Names({"h", "p"}));
}

TEST_F(GemmMappingTest, Rejections) {
  // The batch innermost in an operand: neither matrix group has stride 1.
  EXPECT_TRUE(
      failed(map("[j=3, p=4, b=2]", "[b=2, k=5, p=4]", "[b=2, j=3, k=5]")));
  // A group in two orders: k = (h, p) in the lhs, (p, h) in the rhs.
  EXPECT_TRUE(failed(map("[j=3, h=2, p=4]", "[u=5, p=4, h=2]", "[j=3, u=5]")));
  // Both free groups split by each other in the result: no part of either
  // is a batch that leaves the rest contiguous.
  EXPECT_TRUE(failed(map("[a=2, c=3, i=4]", "[i=4, u=5, v=6]",
                         "[u=5, a=2, v=6, c=3]")));
  // A batch dimension present: free dimensions are not promoted to batches.
  EXPECT_TRUE(failed(map("[b=2, a=2, c=3, i=4]", "[b=2, i=4, u=5]",
                         "[b=2, a=2, u=5, c=3]")));
}

// A free group split by the other in the result runs as a GEMM per element
// of the outer part, the other operand shared (batch stride 0): a
// projection writing [j, b, h, p] for the attention GEMMs. Of the parts
// that could be the batch (j or b), the one giving fewer, larger GEMMs.
TEST_F(GemmMappingTest, SharedOperandBatch) {
  FailureOr<GemmMapping> g =
      map("[b=2, j=3, i=8]", "[h=2, p=4, i=8]", "[j=3, b=2, h=2, p=4]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_FALSE(g->aIsLhs);
  EXPECT_EQ(g->batchDims, Names({"b"}));
  EXPECT_EQ(g->batchCount, 2);
  EXPECT_EQ(g->mDims, Names({"h", "p"}));
  EXPECT_EQ(g->nDims, Names({"j"}));
  EXPECT_EQ(g->m, 8);
  EXPECT_EQ(g->n, 3);
  EXPECT_EQ(g->k, 8);
  // A = the weight, shared; B = x, one [j, i] slice per b.
  EXPECT_EQ(g->strideA, 0);
  EXPECT_EQ(g->strideB, 24);
  // C: b is 8 elements apart, j 16.
  EXPECT_EQ(g->strideC, 8);
  EXPECT_EQ(g->ldc, 16);
  EXPECT_EQ(g->ldb, 8);
  // The same from the other operand's side: a GEMM per h.
  FailureOr<GemmMapping> perHead =
      map("[b=2, j=3, i=8]", "[h=2, p=4, i=8]", "[h=2, b=2, j=3, p=4]");
  ASSERT_TRUE(succeeded(perHead));
  EXPECT_EQ(perHead->batchDims, Names({"h"}));
  EXPECT_EQ(perHead->batchCount, 2);
  EXPECT_EQ(perHead->aIsLhs ? perHead->strideA : perHead->strideB, 0);
}

// Dimensions of size 1 do not break contiguity, whatever their position.
TEST_F(GemmMappingTest, SizeOneDimensionsAreIgnoredForContiguity) {
  FailureOr<GemmMapping> g =
      map("[j=4, x=1, i=8]", "[x=1, i=8, u=16]", "[x=1, j=4, u=16]");
  ASSERT_TRUE(succeeded(g));
  EXPECT_EQ(g->m, 16);
  EXPECT_EQ(g->n, 4);
  EXPECT_EQ(g->k, 8);
  EXPECT_EQ(g->batchCount, 1);
  EXPECT_EQ(g->batchDims, Names({"x"}));
}

// Vector-shaped contractions: m, n or k can be 1.
TEST_F(GemmMappingTest, Degenerate) {
  FailureOr<GemmMapping> dot = map("[i=8]", "[i=8]", "[]");
  ASSERT_TRUE(succeeded(dot));
  EXPECT_EQ(dot->m, 1);
  EXPECT_EQ(dot->n, 1);
  EXPECT_EQ(dot->k, 8);
  FailureOr<GemmMapping> outer = map("[j=4]", "[u=3]", "[j=4, u=3]");
  ASSERT_TRUE(succeeded(outer));
  EXPECT_EQ(outer->k, 1);
  EXPECT_EQ(outer->m, 3);
  EXPECT_EQ(outer->n, 4);
}

TEST_F(GemmMappingTest, FromContractOp) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @G(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                    %w: !sluice.tensor<[i=8, u=16], f32> {sluice.name = "w"})
        -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
      %y = sluice.contract %x, %w {scale = 0.5 : f64}
          : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, u=16], f32>)
          -> !sluice.tensor<[j=4, u=16], f32>
      sluice.return %y : !sluice.tensor<[j=4, u=16], f32>
    })mlir");
  ASSERT_TRUE(module);
  GraphOp graph = *module->getOps<GraphOp>().begin();
  ContractOp contract = *graph.getBody().front().getOps<ContractOp>().begin();
  FailureOr<GemmMapping> g = mapContraction(contract);
  ASSERT_TRUE(succeeded(g));
  EXPECT_EQ(g->a, contract.getRhs());
  EXPECT_EQ(g->b, contract.getLhs());
  EXPECT_EQ(g->alpha, 0.5);
}

//===----------------------------------------------------------------------===//
// Epilogues
//===----------------------------------------------------------------------===//

TEST_F(GemmMappingTest, BiasEpilogue) {
  // ffn1: m = u, so a bias over u is a vector along the rows of D.
  FailureOr<GemmMapping> ffn =
      map("[b=2, j=3, i=8]", "[u=16, i=8]", "[b=2, j=3, u=16]");
  ASSERT_TRUE(succeeded(ffn));
  EXPECT_TRUE(isBiasEpilogueLegal(*ffn, tensor("[u=16]")));
  EXPECT_FALSE(isBiasEpilogueLegal(*ffn, tensor("[j=3]")));
  EXPECT_FALSE(isBiasEpilogueLegal(*ffn, tensor("[j=3, u=16]")));
  // q_proj: m = (h, p); the bias must be packed in that order.
  FailureOr<GemmMapping> q =
      map("[b=2, j=3, i=8]", "[h=2, p=4, i=8]", "[b=2, j=3, h=2, p=4]");
  ASSERT_TRUE(succeeded(q));
  EXPECT_TRUE(isBiasEpilogueLegal(*q, tensor("[h=2, p=4]")));
  EXPECT_FALSE(isBiasEpilogueLegal(*q, tensor("[p=4, h=2]")));
  EXPECT_FALSE(isBiasEpilogueLegal(*q, tensor("[p=4]")));
  // The transposed result: the rows are j, a bias over u is not legal.
  FailureOr<GemmMapping> t = map("[j=4, i=8]", "[i=8, u=16]", "[u=16, j=4]");
  ASSERT_TRUE(succeeded(t));
  EXPECT_FALSE(isBiasEpilogueLegal(*t, tensor("[u=16]")));
  EXPECT_TRUE(isBiasEpilogueLegal(*t, tensor("[j=4]")));
  // Batched: the bias is shared by every batch.
  FailureOr<GemmMapping> s = map("[b=2, h=3, j=4, p=8]", "[b=2, h=3, k=5, p=8]",
                                 "[b=2, h=3, j=4, k=5]");
  ASSERT_TRUE(succeeded(s));
  EXPECT_TRUE(isBiasEpilogueLegal(*s, tensor("[k=5]")));
  EXPECT_FALSE(isBiasEpilogueLegal(*s, tensor("[h=3, k=5]")));
}

TEST_F(GemmMappingTest, BiasGradientEpilogue) {
  // ffn1.grad_rhs: d_w1[u, i] = sum_(b,j) dh[b, j, u] x[b, j, i]; with the
  // result [u, i], A = x (m = i) and B = dh (n = u); d_b1 = sum dh is BGRADB.
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    sluice.graph @G(%x: !sluice.tensor<[b=2, j=3, i=8], f32> {sluice.name = "x"},
                    %dh: !sluice.tensor<[b=2, j=3, u=16], f32> {sluice.name = "dh"},
                    %dq: !sluice.tensor<[b=2, j=3, h=2, p=4], f32> {sluice.name = "dq"})
        -> (!sluice.tensor<[u=16, i=8], f32> {sluice.name = "dw"},
            !sluice.tensor<[h=2, p=4, i=8], f32> {sluice.name = "dwq"}) {
      %dw = sluice.contract %dh, %x
          : (!sluice.tensor<[b=2, j=3, u=16], f32>, !sluice.tensor<[b=2, j=3, i=8], f32>)
          -> !sluice.tensor<[u=16, i=8], f32>
      %dwq = sluice.contract %x, %dq
          : (!sluice.tensor<[b=2, j=3, i=8], f32>, !sluice.tensor<[b=2, j=3, h=2, p=4], f32>)
          -> !sluice.tensor<[h=2, p=4, i=8], f32>
      %db = sluice.reduce sum %dh over ["b", "j"]
          : !sluice.tensor<[b=2, j=3, u=16], f32> -> !sluice.tensor<[u=16], f32>
      %sx = sluice.reduce sum %x over ["j", "b"]
          : !sluice.tensor<[b=2, j=3, i=8], f32> -> !sluice.tensor<[i=8], f32>
      %mx = sluice.reduce max %x over ["b", "j"]
          : !sluice.tensor<[b=2, j=3, i=8], f32> -> !sluice.tensor<[i=8], f32>
      %pb = sluice.reduce sum %x over ["b"]
          : !sluice.tensor<[b=2, j=3, i=8], f32> -> !sluice.tensor<[j=3, i=8], f32>
      %dbq = sluice.reduce sum %dq over ["b", "j"]
          : !sluice.tensor<[b=2, j=3, h=2, p=4], f32> -> !sluice.tensor<[h=2, p=4], f32>
      %dbqt = sluice.reduce sum %dq over ["b", "j"]
          : !sluice.tensor<[b=2, j=3, h=2, p=4], f32> -> !sluice.tensor<[p=4, h=2], f32>
      sluice.return %dw, %dwq : !sluice.tensor<[u=16, i=8], f32>,
                                !sluice.tensor<[h=2, p=4, i=8], f32>
    })mlir");
  ASSERT_TRUE(module);
  GraphOp graph = *module->getOps<GraphOp>().begin();
  Block &body = graph.getBody().front();
  SmallVector<ContractOp> contracts(body.getOps<ContractOp>());
  SmallVector<ReduceOp> reduces(body.getOps<ReduceOp>());
  ASSERT_EQ(contracts.size(), 2u);
  ASSERT_EQ(reduces.size(), 6u);
  FailureOr<GemmMapping> dw = mapContraction(contracts[0]);
  ASSERT_TRUE(succeeded(dw));
  EXPECT_EQ(dw->a, contracts[0].getRhs()); // x: m = i
  EXPECT_EQ(bgradOperandIsA(*dw, reduces[0]), std::optional<bool>(false));
  EXPECT_EQ(bgradOperandIsA(*dw, reduces[1]), std::optional<bool>(true));
  EXPECT_EQ(bgradOperandIsA(*dw, reduces[2]), std::nullopt); // max
  EXPECT_EQ(bgradOperandIsA(*dw, reduces[3]), std::nullopt); // not over k
  EXPECT_EQ(bgradOperandIsA(*dw, reduces[4]), std::nullopt); // not an operand
  FailureOr<GemmMapping> dwq = mapContraction(contracts[1]);
  ASSERT_TRUE(succeeded(dwq));
  EXPECT_EQ(bgradOperandIsA(*dwq, reduces[4]), std::optional<bool>(false));
  EXPECT_EQ(bgradOperandIsA(*dwq, reduces[5]), std::nullopt); // (p, h)
}

//===----------------------------------------------------------------------===//
// Numerics: the mapping computes the einsum
//===----------------------------------------------------------------------===//

/// Index of the element at `point` (dimension name -> position) in `type`.
int64_t offsetOf(NamedTensorType type,
                 const std::map<std::string, int64_t> &point) {
  int64_t offset = 0;
  for (auto [name, size] : llvm::zip(type.getDimNames(), type.getSizes()))
    offset = offset * size + point.at(name.getValue().str());
  return offset;
}

/// result[o] = scale * sum_c lhs * rhs by names, looping over every point.
std::vector<double> einsum(NamedTensorType lhs, NamedTensorType rhs,
                           NamedTensorType result,
                           const std::vector<double> &lhsData,
                           const std::vector<double> &rhsData, double scale) {
  std::vector<std::pair<std::string, int64_t>> all;
  for (NamedTensorType type : {lhs, rhs})
    for (auto [name, size] : llvm::zip(type.getDimNames(), type.getSizes()))
      if (llvm::none_of(all, [&](auto &d) { return d.first == name.str(); }))
        all.emplace_back(name.str(), size);
  std::vector<double> out(*result.getNumElements(), 0.0);
  std::map<std::string, int64_t> point;
  for (auto &d : all)
    point[d.first] = 0;
  while (true) {
    out[offsetOf(result, point)] +=
        scale * lhsData[offsetOf(lhs, point)] * rhsData[offsetOf(rhs, point)];
    size_t d = 0;
    for (; d < all.size(); ++d) {
      if (++point[all[d].first] < all[d].second)
        break;
      point[all[d].first] = 0;
    }
    if (d == all.size())
      break;
  }
  return out;
}

/// A naive column-major strided-batched GEMM (cublasGemmStridedBatchedEx
/// semantics, beta = 0). `written` counts the writes to every element of C.
void referenceGemm(const GemmMapping &g, const std::vector<double> &a,
                   const std::vector<double> &b, std::vector<double> &c,
                   std::vector<int> &written) {
  for (int64_t batch = 0; batch < g.batchCount; ++batch)
    for (int64_t col = 0; col < g.n; ++col)
      for (int64_t row = 0; row < g.m; ++row) {
        double sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          int64_t ai = batch * g.strideA +
                       (g.transA ? l + row * g.lda : row + l * g.lda);
          int64_t bi = batch * g.strideB +
                       (g.transB ? col + l * g.ldb : l + col * g.ldb);
          sum += a.at(ai) * b.at(bi);
        }
        int64_t ci = batch * g.strideC + row + col * g.ldc;
        c.at(ci) = g.alpha * sum;
        ++written.at(ci);
      }
}

/// A random contraction: 0-2 dimensions per role (sizes 1-4), each tensor's
/// layout a random permutation, or (for half of them) its groups kept whole
/// in a random order, so that many map and many do not.
struct RandomContraction {
  std::string lhs, rhs, result;
};

RandomContraction randomContraction(std::mt19937_64 &random) {
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(random);
  };
  const char *roles[4] = {"b", "k", "l", "r"}; // batch, contracted, free
  std::vector<std::pair<std::string, int>> groups[4];
  for (int role = 0; role < 4; ++role) {
    int count = pick(0, 2);
    for (int i = 0; i < count; ++i)
      groups[role].emplace_back(roles[role] + std::to_string(i), pick(1, 4));
  }
  auto layout = [&](std::initializer_list<int> held) {
    std::vector<std::vector<std::pair<std::string, int>>> parts;
    for (int role : held)
      parts.push_back(groups[role]);
    std::vector<std::pair<std::string, int>> dims;
    if (pick(0, 1)) {
      std::shuffle(parts.begin(), parts.end(), random);
      for (auto &part : parts)
        dims.insert(dims.end(), part.begin(), part.end());
    } else {
      for (auto &part : parts)
        dims.insert(dims.end(), part.begin(), part.end());
      std::shuffle(dims.begin(), dims.end(), random);
    }
    std::string text = "[";
    for (auto [index, dim] : llvm::enumerate(dims))
      text +=
          (index ? ", " : "") + dim.first + "=" + std::to_string(dim.second);
    return text + "]";
  };
  return {layout({0, 1, 2}), layout({0, 1, 3}), layout({0, 2, 3})};
}

std::vector<double> randomData(NamedTensorType type, std::mt19937_64 &random) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> data(*type.getNumElements());
  for (double &v : data)
    v = uniform(random);
  return data;
}

TEST_F(GemmMappingTest, ReferenceGemmEqualsEinsumOnRandomContractions) {
  std::mt19937_64 random(7);
  int mapped = 0, batched = 0, transposed = 0, shared = 0;
  for (int trial = 0; trial < 600; ++trial) {
    RandomContraction c = randomContraction(random);
    NamedTensorType lhs = tensor(c.lhs), rhs = tensor(c.rhs),
                    result = tensor(c.result);
    ASSERT_TRUE(lhs && rhs && result);
    FailureOr<GemmMapping> g = mapContraction(lhs, rhs, result, 0.75);
    if (failed(g))
      continue;
    ++mapped;
    batched += g->batchCount > 1;
    transposed += g->transA || g->transB;
    shared += g->batchCount > 1 && (g->strideA == 0 || g->strideB == 0);
    SCOPED_TRACE(c.lhs + " x " + c.rhs + " -> " + c.result);
    std::vector<double> lhsData = randomData(lhs, random);
    std::vector<double> rhsData = randomData(rhs, random);
    std::vector<double> expected =
        einsum(lhs, rhs, result, lhsData, rhsData, 0.75);
    std::vector<double> actual(expected.size(), NAN);
    std::vector<int> written(expected.size(), 0);
    referenceGemm(*g, g->aIsLhs ? lhsData : rhsData,
                  g->aIsLhs ? rhsData : lhsData, actual, written);
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(written[i], 1) << "element " << i;
      ASSERT_NEAR(actual[i], expected[i], 1e-12) << "element " << i;
    }

    // The C++ backend's GEMM (its loop nest) with the same parameters.
    std::vector<float> lhsFloat(lhsData.begin(), lhsData.end());
    std::vector<float> rhsFloat(rhsData.begin(), rhsData.end());
    std::vector<float> cpu(expected.size(), NAN);
    const std::vector<float> &a = g->aIsLhs ? lhsFloat : rhsFloat;
    const std::vector<float> &b = g->aIsLhs ? rhsFloat : lhsFloat;
    ASSERT_EQ(sluice_cpu_gemm(g->transA, g->transB, g->m, g->n, g->k,
                              static_cast<float>(g->alpha), a.data(), g->lda,
                              g->strideA, b.data(), g->ldb, g->strideB,
                              cpu.data(), g->ldc, g->strideC, g->batchCount),
              0);
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_NEAR(cpu[i], expected[i], 1e-5)
          << "sluice_cpu_gemm, element " << i;
  }
  // The generator must exercise the interesting cases.
  EXPECT_GT(mapped, 150);
  EXPECT_GT(batched, 30);
  EXPECT_GT(transposed, 50);
  EXPECT_GT(shared, 10);
}

//===----------------------------------------------------------------------===//
// --sluice-legalize-contractions
//===----------------------------------------------------------------------===//

/// The graph @G(lhs, rhs) -> contract(lhs, rhs).
std::string contractionGraph(const RandomContraction &c) {
  std::string l = "!sluice.tensor<" + c.lhs + ", f32>";
  std::string r = "!sluice.tensor<" + c.rhs + ", f32>";
  std::string o = "!sluice.tensor<" + c.result + ", f32>";
  return "sluice.graph @G(%l: " + l + " {sluice.name = \"l\"}, %r: " + r +
         " {sluice.name = \"r\"}) -> (" + o +
         " {sluice.name = \"y\"}) {\n"
         "  %y = sluice.contract %l, %r {scale = 0.75 : f64, sluice.name = "
         "\"c\"} : (" +
         l + ", " + r + ") -> " + o + "\n  sluice.return %y : " + o + "\n}\n";
}

// Legalization makes every random contraction map, touches none that
// already did, and does not change the interpreter's results (bit for bit:
// the interpreter sums in an order that does not depend on layouts).
TEST_F(GemmMappingTest, LegalizationMapsEveryContractionAndKeepsResults) {
  std::mt19937_64 random(11);
  int legalized = 0;
  for (int trial = 0; trial < 300; ++trial) {
    RandomContraction c = randomContraction(random);
    std::string source = contractionGraph(c);
    SCOPED_TRACE(source);
    OwningOpRef<ModuleOp> module = parse(source);
    ASSERT_TRUE(module);
    auto graph = *module->getOps<GraphOp>().begin();
    auto contract = *graph.getBody().front().getOps<ContractOp>().begin();
    bool mappedBefore = succeeded(mapContraction(contract));

    Buffer lhs{tensor(c.lhs), {}}, rhs{tensor(c.rhs), {}};
    lhs.data = randomData(lhs.type, random);
    rhs.data = randomData(rhs.type, random);
    InterpreterOptions options;
    options.precision = Precision::F64;
    llvm::Expected<std::vector<Buffer>> before =
        interpret(graph, {lhs, rhs}, options);
    ASSERT_TRUE(bool(before)) << llvm::toString(before.takeError());

    PassManager pm(&context);
    pm.addNestedPass<GraphOp>(createSluiceLegalizeContractions());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    ASSERT_TRUE(succeeded(verify(*module)));
    graph = *module->getOps<GraphOp>().begin();
    contract = *graph.getBody().front().getOps<ContractOp>().begin();
    EXPECT_TRUE(succeeded(mapContraction(contract)));
    size_t relayouts =
        llvm::range_size(graph.getBody().front().getOps<RelayoutOp>());
    if (mappedBefore)
      EXPECT_EQ(relayouts, 0u);
    else
      EXPECT_GT(relayouts, 0u);
    legalized += !mappedBefore;

    llvm::Expected<std::vector<Buffer>> after =
        interpret(graph, {lhs, rhs}, options);
    ASSERT_TRUE(bool(after)) << llvm::toString(after.takeError());
    ASSERT_EQ(before->size(), 1u);
    ASSERT_EQ(after->size(), 1u);
    EXPECT_EQ((*after)[0].type, (*before)[0].type);
    EXPECT_EQ((*after)[0].data, (*before)[0].data);
  }
  EXPECT_GT(legalized, 100);
}

/// Runs every graph of `before` and of `after` (the same graphs, legalized)
/// on the same random inputs and expects bit-identical results.
void expectSameResults(ModuleOp before, ModuleOp after) {
  std::mt19937_64 random(5);
  InterpreterOptions options;
  options.precision = Precision::F64;
  options.seed = 99;
  for (GraphOp graph : before.getOps<GraphOp>()) {
    SCOPED_TRACE(graph.getSymName().str());
    auto legalized = after.lookupSymbol<GraphOp>(graph.getSymName());
    ASSERT_TRUE(legalized);
    std::vector<Buffer> inputs;
    for (Type type : graph.getArgumentTypes()) {
      Buffer buffer{llvm::cast<NamedTensorType>(type), {}};
      buffer.data = randomData(buffer.type, random);
      inputs.push_back(std::move(buffer));
    }
    llvm::Expected<std::vector<Buffer>> expected =
        interpret(graph, inputs, options);
    ASSERT_TRUE(bool(expected)) << llvm::toString(expected.takeError());
    llvm::Expected<std::vector<Buffer>> actual =
        interpret(legalized, inputs, options);
    ASSERT_TRUE(bool(actual)) << llvm::toString(actual.takeError());
    ASSERT_EQ(actual->size(), expected->size());
    for (size_t i = 0; i < expected->size(); ++i) {
      EXPECT_EQ((*actual)[i].type, (*expected)[i].type) << "result " << i;
      EXPECT_EQ((*actual)[i].data, (*expected)[i].data) << "result " << i;
    }
  }
}

// A whole training layer (pre-LN, causal, dropout, every dimension a
// different size): after autodiff, legalization relayouts the attention
// contractions of both graphs, every contraction maps, and the forward and
// backward graphs compute exactly what they computed before.
TEST_F(GemmMappingTest, LegalizedTrainingLayerComputesTheSameResults) {
  llvm::Expected<LayerSpec> spec = parseLayerSpec(R"json({
    "name": "layer", "norm": "pre", "causal": true,
    "dims": {"batch": 3, "seq": 4, "heads": 2, "head_dim": 5, "embed": 10,
             "ffn": 7},
    "activation": "gelu",
    "dropout": {"attention": 0.3, "residual": 0.2, "activation": 0.1},
    "dtype": "f32", "training": true})json",
                                                  "layer.json");
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  OwningOpRef<ModuleOp> module =
      buildEncoderGraph(context, *spec, UnknownLoc::get(&context));
  ASSERT_TRUE(module);
  PassManager autodiff(&context);
  autodiff.addPass(createSluiceAutodiff());
  ASSERT_TRUE(succeeded(autodiff.run(*module)));

  OwningOpRef<ModuleOp> legalized = module->clone();
  PassManager pm(&context);
  pm.addNestedPass<GraphOp>(createSluiceLegalizeContractions());
  ASSERT_TRUE(succeeded(pm.run(*legalized)));
  ASSERT_TRUE(succeeded(verify(*legalized)));

  unsigned contracts = 0, relayouts = 0;
  for (GraphOp graph : legalized->getOps<GraphOp>())
    for (Operation &op : graph.getBody().front()) {
      if (auto contract = llvm::dyn_cast<ContractOp>(op)) {
        ++contracts;
        EXPECT_TRUE(succeeded(mapContraction(contract)))
            << "not mapped: "
            << contract
                   ->getAttrOfType<StringAttr>(
                       SluiceDialect::getOpNameAttrName())
                   .str();
      }
      if (auto relayout = llvm::dyn_cast<RelayoutOp>(op))
        relayouts += hasOriginKind(relayout, OriginKind::layout);
    }
  // 8 forward, 16 backward contractions; the attention ones need relayouts.
  EXPECT_EQ(contracts, 24u);
  EXPECT_GT(relayouts, 0u);
  expectSameResults(*module, *legalized);
}

} // namespace
