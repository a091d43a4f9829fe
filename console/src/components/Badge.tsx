export type Tone = 'good' | 'bad' | 'warn' | 'neutral'

export function Badge({ tone, children }: { tone: Tone; children: string }) {
  return <span class={`badge badge-${tone}`}>{children}</span>
}
