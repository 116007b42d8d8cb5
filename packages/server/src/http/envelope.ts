/** The two shapes every response body takes (docs/api-contract.md, section 7 "Errors"). */
export const ok = <T>(data: T) => ({ success: true as const, data });
export const failure = (error: string) => ({ success: false as const, error });
