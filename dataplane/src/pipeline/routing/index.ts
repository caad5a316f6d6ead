/** Difficulty routing: classify the request, apply the tenant's policy, inject effort. */
export {
  classifyDifficulty,
  scoreFeatures,
  type Contribution,
  type Difficulty,
  type DifficultyLevel,
} from './classify.ts';
export { extractFeatures, type DifficultyFeatures } from './features.ts';
export { decideRoute, type RouteDecision, type RouteInput, type RoutingLevels } from './policy.ts';
export { injectReasoningEffort } from './effort.ts';
