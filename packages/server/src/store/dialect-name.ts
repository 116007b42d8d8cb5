/** Which database a store runs on. Its own module: the store's parts need it and the store's entry imports them. */
export type DialectName = "sqlite" | "postgres";
