/** The content of a version: what is hashed, stored immutably and assembled. */
export interface Section {
  title: string;
  content: string;
  enabled: boolean;
}

export interface Tool {
  type: "function";
  function: {
    name: string;
    description?: string;
    parameters: Record<string, unknown>;
  };
}

export interface Content {
  sections: Section[];
  tools: Tool[];
}

/** A section as read back: the stored section plus its deterministic id. */
export interface SectionWithId extends Section {
  id: string;
}
