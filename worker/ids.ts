/** Path identifiers shared by the route schemas (decisions.md "Identifiers, bodies and cost"). */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../core/limits';

/** A workspace id: letters, digits, _ . - (1 to 64 characters, starting with a letter or digit). */
export const WORKSPACE_ID = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,${LIMITS.workspaceIdCharacters - 1}}$`);

export const WorkspaceIdParam = z
  .string()
  .regex(
    WORKSPACE_ID,
    `Letters, digits, _ . - (1 to ${LIMITS.workspaceIdCharacters} characters, starting with a letter or digit)`,
  )
  .openapi({ param: { name: 'workspaceId', in: 'path' }, example: 'ws_demo' });
