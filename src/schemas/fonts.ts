import { Type } from '@sinclair/typebox';

/** GET /v1/fonts (API-DECISIONS "Endpoint bodies"): the fonts `style.font` may name. */
export const FontsResponse = Type.Object(
  {
    fonts: Type.Array(
      Type.Object({
        name: Type.String({ description: 'What `style.font` takes (e.g. LiberationSerif-Bold).' }),
        family: Type.String({
          description: 'The family it serves (e.g. Times New Roman); also accepted by `style.font`.',
        }),
        style: Type.String({ description: 'regular, bold, italic or bold-italic.' }),
        kind: Type.Union([Type.Literal('metric-twin'), Type.Literal('look-alike')], {
          description: 'Also the `font_source` of text drawn in it.',
        }),
        metric_compatible_with: Type.Array(Type.String()),
      }),
    ),
  },
  { $id: 'Fonts', additionalProperties: true, description: 'Fonts the deployment writes with.' },
);
