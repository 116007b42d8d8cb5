import type { ChatMessage } from "./run-types";

/**
 * The chat after the assembled system prompt: user and assistant turns, in order. The last turn is the
 * user's by default, which is what the model answers.
 */
export function MessagesEditor({
  messages,
  onChange,
}: {
  messages: readonly ChatMessage[];
  onChange: (messages: ChatMessage[]) => void;
}) {
  const set = (index: number, change: Partial<ChatMessage>) =>
    onChange(messages.map((m, i) => (i === index ? ({ ...m, ...change } as ChatMessage) : m)));
  return (
    <fieldset className="playground-fieldset">
      <legend className="field-label">Messages</legend>
      <ol className="playground-messages">
        {messages.map((message, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: turns have no identity but their place
          <li key={index} className="playground-message">
            <div className="playground-message-head">
              <select
                className="select playground-role"
                aria-label={`Role of message ${index + 1}`}
                value={message.role}
                onChange={(e) => set(index, { role: e.target.value as "user" | "assistant" })}
              >
                <option value="user">user</option>
                <option value="assistant">assistant</option>
              </select>
              <span className="spacer" />
              {messages.length > 1 ? (
                <button
                  type="button"
                  className="button button-small button-ghost"
                  aria-label={`Remove message ${index + 1}`}
                  onClick={() => onChange(messages.filter((_, i) => i !== index))}
                >
                  Remove
                </button>
              ) : null}
            </div>
            <textarea
              className="textarea"
              rows={2}
              aria-label={`Message ${index + 1} (${message.role})`}
              value={message.content ?? ""}
              onChange={(e) => set(index, { content: e.target.value })}
            />
          </li>
        ))}
      </ol>
      <button
        type="button"
        className="button button-small"
        onClick={() =>
          onChange([
            ...messages,
            { role: messages[messages.length - 1]?.role === "user" ? "assistant" : "user", content: "" },
          ])
        }
      >
        Add message
      </button>
    </fieldset>
  );
}
