import { Type } from '@sinclair/typebox';

/** POST /v1/files (API-DECISIONS "Endpoint bodies"). */
export const FileReservation = Type.Object(
  {
    file_id: Type.String(),
    upload_url: Type.String({ description: 'PUT the bytes here with `headers`; valid until expires_at.' }),
    headers: Type.Record(Type.String(), Type.String()),
    expires_at: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'FileReservation',
    additionalProperties: true,
    examples: [
      {
        file_id: 'file_4Jq8x2',
        upload_url: 'http://127.0.0.1:8080/v1/files/file_4Jq8x2/content?token=…',
        headers: { 'Content-Type': 'application/pdf' },
        expires_at: '2026-11-23T10:00:00Z',
      },
    ],
  },
);

/** POST /v1/files takes no members: an empty body or `{}`. */
export const FileReservationBody = Type.Object({}, { additionalProperties: false });

export const FileParams = Type.Object({
  // No length limit here: an id that is not a file's answers 404 after the token check (SPEC order).
  file_id: Type.String({ description: 'file_… as returned by the API.' }),
});

/** The signed token of a file link: missing 400 (here), not valid for the file 401 (the route). */
export const TokenQuery = Type.Object({
  token: Type.String({ description: 'Signed token of the link returned by the API.' }),
});
