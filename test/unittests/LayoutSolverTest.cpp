//===- LayoutSolverTest.cpp - exact layout selection solver ---------------===//
//
// The DP equals exhaustive search on random small problems (the issue's
// "selection equals an exhaustive search" on the solver level), stays small
// on long chains, and gives up rather than guess when the frontier is wider
// than allowed.
//
//===----------------------------------------------------------------------===//

#include "sluice/Analysis/LayoutSolver.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir::sluice;

namespace {

/// A random problem: `numVars` variables of 1-3 choices, `numTerms` terms
/// over 1-3 distinct variables, costs in [0, 100).
FactoredProblem randomProblem(std::mt19937 &rng, unsigned numVars,
                              unsigned numTerms) {
  FactoredProblem problem;
  std::uniform_int_distribution<unsigned> choices(1, 3), arity(1, 3),
      var(0, numVars - 1);
  std::uniform_real_distribution<double> cost(0, 100);
  for (unsigned v = 0; v < numVars; ++v)
    problem.numChoices.push_back(choices(rng));
  for (unsigned t = 0; t < numTerms; ++t) {
    FactoredProblem::Term term;
    unsigned size = std::min(arity(rng), numVars);
    while (term.vars.size() < size) {
      unsigned v = var(rng);
      if (std::find(term.vars.begin(), term.vars.end(), v) == term.vars.end())
        term.vars.push_back(v);
    }
    size_t combinations = 1;
    for (unsigned v : term.vars)
      combinations *= problem.numChoices[v];
    for (size_t i = 0; i < combinations; ++i)
      term.costs.push_back(cost(rng));
    problem.terms.push_back(std::move(term));
  }
  return problem;
}

TEST(LayoutSolverTest, ExactEqualsExhaustiveOnRandomProblems) {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    FactoredProblem problem = randomProblem(rng, 1 + round % 7, 1 + round % 9);
    ASSERT_TRUE(isWellFormed(problem));
    std::optional<LayoutSolution> exact = solveExact(problem);
    ASSERT_TRUE(exact.has_value());
    LayoutSolution exhaustive = solveExhaustive(problem);
    EXPECT_DOUBLE_EQ(exact->cost, exhaustive.cost) << "round " << round;
    // The returned assignment achieves the returned cost.
    EXPECT_DOUBLE_EQ(evaluate(problem, exact->choice), exact->cost);
  }
}

TEST(LayoutSolverTest, ChainKeepsTheFrontierSmall) {
  // 40 tensors in a chain, 4 layouts each, every kernel reading one tensor
  // and writing the next: 4^40 assignments, a frontier of one tensor.
  FactoredProblem problem;
  problem.numChoices.assign(40, 4);
  for (unsigned t = 0; t + 1 < 40; ++t) {
    FactoredProblem::Term term;
    term.vars = {t, t + 1};
    for (unsigned a = 0; a < 4; ++a)
      for (unsigned b = 0; b < 4; ++b)
        // Cheapest when the layouts agree, and layout 2 is cheapest of all.
        term.costs.push_back((a == b ? 1.0 : 5.0) + (b == 2 ? 0.0 : 0.5));
    problem.terms.push_back(term);
  }
  std::optional<LayoutSolution> exact = solveExact(problem);
  ASSERT_TRUE(exact.has_value());
  EXPECT_LE(exact->states, 40u * 16);
  EXPECT_DOUBLE_EQ(exact->cost, 39 * 1.0);
  for (unsigned choice : exact->choice)
    EXPECT_EQ(choice, 2u);
}

TEST(LayoutSolverTest, WideFrontierGivesUp) {
  // One term per variable first, then one term over all: every variable is
  // live across the whole order.
  FactoredProblem problem;
  problem.numChoices.assign(9, 3);
  FactoredProblem::Term all;
  for (unsigned v = 0; v < 9; ++v) {
    problem.terms.push_back({{v}, {1, 2, 3}});
    all.vars.push_back(v);
  }
  all.costs.assign(19683, 0.0); // 3^9
  problem.terms.push_back(all);
  ASSERT_TRUE(isWellFormed(problem));
  EXPECT_FALSE(solveExact(problem, /*maxStates=*/1000).has_value());
  std::optional<LayoutSolution> exact = solveExact(problem);
  ASSERT_TRUE(exact.has_value());
  EXPECT_DOUBLE_EQ(exact->cost, 9.0);
}

TEST(LayoutSolverTest, MalformedProblemsAreRejected) {
  FactoredProblem problem;
  problem.numChoices = {2, 2};
  problem.terms.push_back({{0, 1}, {1, 2, 3}}); // needs 4 costs
  EXPECT_FALSE(isWellFormed(problem));
  problem.terms[0] = {{0, 0}, {1, 2, 3, 4}}; // repeated variable
  EXPECT_FALSE(isWellFormed(problem));
  problem.terms[0] = {{0, 2}, {1, 2, 3, 4}}; // no variable 2
  EXPECT_FALSE(isWellFormed(problem));
  problem.terms[0] = {{1, 0}, {1, 2, 3, 4}};
  EXPECT_TRUE(isWellFormed(problem));
}

} // namespace
