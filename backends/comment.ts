/**
 * The neutral shape every backend's comment client returns (issue 34; /work/tmp-i34/design.md). Defined here
 * by the wiki branch because the core branch had not got it yet; the core helper owns this file and the lead
 * keeps one of the two at merge (they are the same interface).
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
