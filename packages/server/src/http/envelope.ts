/** The two shapes every response body takes (spec section 7). */
export const ok = <T>(data: T) => ({ success: true as const, data });
export const failure = (error: string) => ({ success: false as const, error });
