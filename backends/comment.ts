/**
 * A comment as every backend's comment client returns it (issue 34; the session's design): the vendor's
 * comment in neutral terms, for the cache to write as `comments/<record>/<id>.md`.
 */
export interface ServerComment {
  readonly id: string; // the vendor's comment id as a string
  readonly parentKey: string; // the record's key as the backend's BackendRecord.key has it (sim "42", forge "42", tracker "TEST-42", wiki "2818063")
  readonly author: string; // as written in the file (see above)
  readonly authorId: string; // what "you" is compared with: forge login, tracker/wiki accountId, sim author name
  readonly body: string; // as the file holds it
  readonly createdAt: string; // RFC 3339 as the server sends it
  readonly updatedAt: string;
  readonly version: number | null;
}
