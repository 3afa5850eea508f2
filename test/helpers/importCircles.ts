// Import circles of a module graph: files that import one another round,
// directly or through others, found as strongly connected components.

/** Files that import one another round, directly or not: all of them, and one circle through them. */
export interface ImportCircle {
  /** Every file of the strongly connected component, sorted. */
  files: string[];
  /** A shortest circle from the alphabetically first file back to it: `a.ts → b.ts → a.ts`. */
  path: string[];
}

/**
 * Every import circle of a graph, one per strongly connected component of more
 * than one file (or a file importing itself).
 */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): ImportCircle[] {
  // Tarjan's strongly connected components, iteratively so a long chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; next: number };
      const edges = graph.get(frame.node) ?? [];
      if (frame.next < edges.length) {
        const to = edges[frame.next++] as string;
        if (!graph.has(to)) continue;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(to) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
        if (member === frame.node) break;
      }
      if (component.length > 1 || (graph.get(frame.node) ?? []).includes(frame.node)) components.push(component);
    }
  }
  return components
    .map((component) => ({ files: [...component].sort(), path: circleThrough(graph, new Set(component)) }))
    .sort((a, b) => (a.files[0] as string).localeCompare(b.files[0] as string));
}

/** A shortest circle through a component's first file that stays inside the component (breadth first). */
function circleThrough(graph: ReadonlyMap<string, readonly string[]>, members: ReadonlySet<string>): string[] {
  const start = [...members].sort()[0] as string;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head += 1) {
    const node = queue[head] as string;
    for (const to of [...(graph.get(node) ?? [])].sort()) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = cameFrom.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}
