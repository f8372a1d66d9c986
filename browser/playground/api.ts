/**
 * The API side of the playground: the typed client (client/src) with the page's token, and each
 * call's answer with its JSON text.
 */
import {
  ApiProblem,
  createClient,
  type AutocompleteRequest,
  type SimilarityMatrixRequest,
  type TextScoresRequest,
  type TokenizationRequest,
  type WordAvailabilitiesRequest,
  type WordScoresRequest,
} from '../../client/src/index';
import { state } from './state';

function workspaceOf(token: string): string | null {
  try {
    const payload = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as Record<
      string,
      unknown
    >;
    return typeof payload.workspaceId === 'string' ? payload.workspaceId : null;
  } catch {
    return null;
  }
}

/** An API refusal or a failed call: `message` is "status code: detail" (the console's and the tests' form). */
export class ProblemShown extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${status} ${code}: ${detail}`);
  }
}

/** The typed API client (client/src): retries 429/502/503/504 with one Idempotency-Key per call. */
const client = createClient({ baseUrl: location.origin, token: () => state.token });

/** One API call; a problem answer is shown as "status code: detail". */
async function apiCall<T>(call: Promise<T>): Promise<{ json: T; raw: string }> {
  try {
    const json = await call;
    return { json, raw: JSON.stringify(json) };
  } catch (err) {
    if (err instanceof ApiProblem) throw new ProblemShown(err.status, err.code, err.detail);
    throw err;
  }
}

const ws = (): string => {
  const w = workspaceOf(state.token);
  if (!w)
    throw new ProblemShown(
      401,
      'TOKEN_WITHOUT_WORKSPACE',
      'The token has no workspaceId claim (mint one with npm run token -- --workspace ws_demo)',
    );
  return w;
};

export const api = {
  textScores: (body: TextScoresRequest) => apiCall(client.textScores(body, { workspaceId: ws() })),
  wordScores: (body: WordScoresRequest) => apiCall(client.wordScores(body, { workspaceId: ws() })),
  autocomplete: (body: AutocompleteRequest) => apiCall(client.autocomplete(body, { workspaceId: ws() })),
  tokenize: (body: TokenizationRequest) => apiCall(client.tokenize(body, { workspaceId: ws() })),
  wordAvailabilities: (id: string, body: WordAvailabilitiesRequest) => apiCall(client.wordAvailabilities(id, body)),
  similarityMatrix: (id: string, body: SimilarityMatrixRequest) => apiCall(client.similarityMatrix(id, body)),
  listModels: () => apiCall(client.listModels({ size: 100 })),
};
