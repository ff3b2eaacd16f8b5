import { Type } from '@sinclair/typebox';

/** POST /v1/files (API-DECISIONS "Endpoint bodies"). */
export const FileReservation = Type.Object({
  file_id: Type.String(),
  upload_url: Type.String({ description: 'PUT the bytes here with `headers`; valid until expires_at.' }),
  headers: Type.Record(Type.String(), Type.String()),
  expires_at: Type.String({ format: 'date-time' }),
});
