/** What one model request can cost at most (model/gateway/request-bound.ts reads it from the body; model/gateway/policy.ts admits by it). */
export interface RequestBound {
  /** Input tokens the request cannot exceed (meaningless when `unbounded` is set). */
  input_tokens: number;
  /** How many outputs the upstream generates (`n`, `best_of`): the output limit applies to each. */
  outputs: number;
  /** Why the request's input cannot be bounded from its body, or null. */
  unbounded: string | null;
  /** The request continues a conversation the upstream keeps (`previous_response_id`, `conversation`). */
  serverState: boolean;
}
