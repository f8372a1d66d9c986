/**
 * What a scoring request decides alone, checked before anything is loaded (decisions.md
 * "Admission and cost": validate everything the request alone decides before any work): its
 * dimensions' shape and the goal's references between its parts. The Worker runs these before
 * admission, the engine before loading the model, and the scorers again for direct callers.
 */
import { ScoringError } from './common';
import type { DimensionRequest, GoalConfig } from '../requests';

/** Ids repeated, oppositeWords outside an axis, expand on an axis: 422 naming the field. */
export function checkDimensionRequests(dimensions: readonly DimensionRequest[] | undefined): void {
  const ids = new Set<number>();
  (dimensions ?? []).forEach((d, i) => {
    if (ids.has(d.id))
      throw new ScoringError('VALIDATION_FAILED', `Dimension id ${d.id} is repeated`, `dimensions.${i}.id`);
    ids.add(d.id);
    if (d.oppositeWords !== undefined && d.type !== 'axis') {
      throw new ScoringError(
        'VALIDATION_FAILED',
        'oppositeWords is only allowed for dimensions of type axis',
        `dimensions.${i}.oppositeWords`,
      );
    }
    if (d.expand && d.type === 'axis') {
      // Nearest neighbours of a pole include its antonyms (good -> bad), so expansion would blur the axis.
      throw new ScoringError(
        'VALIDATION_FAILED',
        'expand is not allowed for dimensions of type axis',
        `dimensions.${i}.expand`,
      );
    }
  });
}

/**
 * goalConfig.dimensions and goalConfig.mappers: each id among the request's dimensions and
 * mapperKeys, none repeated.
 */
export function checkGoalReferences(
  goal: GoalConfig,
  dimensionIds: Iterable<number>,
  mapperIds: Iterable<string>,
): void {
  checkGoalRefs(goal.dimensions, new Set(dimensionIds), 'dimension', "the request's dimensions");
  checkGoalRefs(goal.mappers, new Set(mapperIds), 'mapper', "the request's mapperKeys");
}

function checkGoalRefs<T>(
  refs: ReadonlyArray<{ id: T }> | undefined,
  requested: ReadonlySet<T>,
  kind: 'dimension' | 'mapper',
  among: string,
): void {
  const seen = new Set<T>();
  (refs ?? []).forEach((g, i) => {
    if (!requested.has(g.id))
      throw new ScoringError(
        'VALIDATION_FAILED',
        `goalConfig ${kind} ${g.id} is not among ${among}`,
        `goalConfig.${kind}s.${i}.id`,
      );
    if (seen.has(g.id))
      throw new ScoringError(
        'VALIDATION_FAILED',
        `goalConfig ${kind} ${g.id} is repeated`,
        `goalConfig.${kind}s.${i}.id`,
      );
    seen.add(g.id);
  });
}

/** The checks of a text-scores or word-scores request (no goal in word-scores). */
export function checkScoringRequest(req: {
  dimensions?: readonly DimensionRequest[];
  mapperKeys?: readonly string[];
  goalConfig?: GoalConfig;
}): void {
  checkDimensionRequests(req.dimensions);
  if (req.goalConfig)
    checkGoalReferences(
      req.goalConfig,
      (req.dimensions ?? []).map((d) => d.id),
      req.mapperKeys ?? [],
    );
}
