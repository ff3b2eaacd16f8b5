/**
 * Operations of SPEC.md "Endpoints" that this build does not serve yet. They stay in the
 * document (marked `x-pdfedit-status: planned`, skipped by the schemathesis run) so that
 * clients see the whole contract; each one drops out by itself as soon as a route with
 * the same method and path is registered (that route's own schemas then describe it).
 */
export const plannedOperations: Record<string, Record<string, Record<string, unknown>>> = {
  '/v1/billing/webhook/{provider}': {
    post: {
      summary: 'Payment provider callback',
      description: 'Authenticated by the provider signature header, not a key. Each event is applied once.',
      operationId: 'PaymentProviderCallback',
      tags: ['billing'],
      security: [],
      parameters: [{ name: 'provider', in: 'path', required: true, schema: { type: 'string' } }],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        200: {
          description: 'Acknowledged.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Ack' } } },
        },
        400: { $ref: '#/components/responses/E400' },
        401: { $ref: '#/components/responses/E401' },
      },
    },
  },
  '/v1/billing/checkout': {
    post: {
      summary: 'Create checkout link',
      operationId: 'CreateCheckoutLink',
      // Rate-limited like every key-authenticated operation (finishDocument adds the headers).
      'x-pdfedit-rate-limited': true,
      tags: ['billing'],
      security: [{ bearerAuth: [] }],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/CheckoutRequest' } } },
      },
      responses: {
        200: {
          description: 'Checkout URL bound to the account.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/CheckoutResult' } } },
        },
        400: { $ref: '#/components/responses/E400' },
        401: { $ref: '#/components/responses/E401' },
        429: { $ref: '#/components/responses/E429' },
      },
    },
  },
};
