import { Type } from '@sinclair/typebox';

/** The engine's processes and queue as /healthz reports them. */
export const EngineHealth = Type.Object(
  {
    processes: Type.Integer({ minimum: 0, description: 'Engine processes running or starting.' }),
    busy: Type.Integer({ minimum: 0, description: 'Processes running a call.' }),
    free: Type.Integer({ minimum: 0, description: 'Processes ready for a call.' }),
    starting: Type.Integer({ minimum: 0, description: 'Processes binding the engine.' }),
    queued: Type.Integer({ minimum: 0, description: 'Calls waiting for a process.' }),
    saturated_ms: Type.Integer({
      minimum: 0,
      description: 'How long no process has been free while calls were waiting or running.',
    }),
    budget_ms: Type.Integer({ minimum: 0, description: 'The default budget of one engine call.' }),
  },
  { additionalProperties: false },
);

/** GET /healthz. */
export const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('engine_saturated')], {
      description:
        'ok, or engine_saturated (answered with 503) when no engine process has been free for longer than the budget of one call.',
    }),
    engine: Type.Optional(EngineHealth),
  },
  {
    $id: 'Health',
    additionalProperties: false,
    description:
      'The API and its database answer; the engine has a free process or frees one within its budget.',
  },
);
