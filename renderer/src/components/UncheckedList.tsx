/** The checks a verification could not make, each saying why: shown apart from problems, never as passes. */
export function UncheckedList({ items, testId }: { items: readonly string[]; testId: string }) {
  if (items.length === 0) return null;
  return (
    <div data-testid={testId}>
      Not checked:
      <ul>
        {items.map((u) => (
          <li key={u}>{u}</li>
        ))}
      </ul>
    </div>
  );
}
