/**
 * dependsOn graphs for the differential test: a cycle of every length from 1 (a step depending
 * on itself) to 50 among steps at random positions, with steps that reach the cycle and steps
 * that do not around it; two disjoint cycles; and acyclic chains and diamonds of the same sizes,
 * which must pass. Every step is a valid tool step and every dependency names a step, so a cycle
 * is the only defect.
 */

import type { Obj } from './composite-valid.ts'
import type { Random } from './random.ts'

export interface Graph {
  readonly name: string
  readonly spec: Obj
  /** How many cycles it holds. */
  readonly cycles: number
}

function spec(steps: readonly Obj[]): Obj {
  return { name: 'graph', description: 'A dependency graph.', steps }
}

/** `count` tool steps with distinct ids, some not identifiers. */
function steps(random: Random, count: number): Obj[] {
  const style = random.pick(['s', 'step-', 'Step ', 'ä'])
  return Array.from({ length: count }, (_, i) => ({ id: `${style}${i}`, tool: 'fetch' }))
}

function depend(step: Obj, on: Obj): void {
  const dependsOn: string[] = step['dependsOn'] ?? []
  if (!dependsOn.includes(on['id'])) step['dependsOn'] = [...dependsOn, on['id']]
}

/** Each member depends on the next, the last on the first. */
function cycle(members: readonly Obj[]): void {
  members.forEach((step, k) => {
    depend(step, members[(k + 1) % members.length]!)
  })
}

/**
 * A cycle of every length placed at random among up to 5 more steps: feeders depend on a cycle
 * step (they reach the cycle), leaves depend on nothing, and cycle steps may also depend on
 * leaves.
 */
export function cycles(random: Random): Graph[] {
  const graphs: Graph[] = []
  for (let length = 1; length <= 50; length++) {
    const extra = random.int(0, 5)
    const all = steps(random, length + extra)
    const positions = random.shuffled(all.map((_, i) => i))
    const members = positions.slice(0, length).map((i) => all[i]!)
    const others = positions.slice(length).map((i) => all[i]!)
    // The cycle runs in a random order over its members.
    cycle(random.shuffled(members))
    const leaves = others.filter(() => random.chance(0.5))
    for (const other of others) {
      if (leaves.includes(other)) continue
      depend(other, random.pick(members))
      if (leaves.length > 0 && random.chance(0.5)) depend(other, random.pick(leaves))
    }
    for (const member of members)
      if (leaves.length > 0 && random.chance(0.3)) depend(member, random.pick(leaves))
    // Duplicated entries in a dependsOn list are no defect.
    if (random.chance(0.2)) {
      const step = random.pick(members)
      step['dependsOn'] = [...step['dependsOn'], ...step['dependsOn']]
    }
    graphs.push({
      name: `cycle of ${length} among ${length + extra} steps`,
      spec: spec(all),
      cycles: 1,
    })
  }
  for (const [a, b] of [
    [1, 1],
    [2, 3],
    [1, 7],
    [5, 5],
    [12, 30],
  ] as const) {
    const all = steps(random, a + b + 2)
    const positions = random.shuffled(all.map((_, i) => i))
    cycle(positions.slice(0, a).map((i) => all[i]!))
    cycle(positions.slice(a, a + b).map((i) => all[i]!))
    graphs.push({ name: `cycles of ${a} and ${b}`, spec: spec(all), cycles: 2 })
  }
  return graphs
}

/** Chains (each step depending on the next in a random order) and diamonds: no cycle. */
export function acyclic(random: Random): Graph[] {
  const graphs: Graph[] = []
  for (let length = 1; length <= 50; length++) {
    const all = steps(random, length)
    const order = random.shuffled(all)
    for (let k = 0; k + 1 < order.length; k++) depend(order[k]!, order[k + 1]!)
    graphs.push({ name: `chain of ${length}`, spec: spec(all), cycles: 0 })
  }
  for (const width of [2, 3, 10, 48]) {
    const all = steps(random, width + 2)
    const [top, bottom] = [all[0]!, all.at(-1)!]
    for (const middle of all.slice(1, -1)) {
      depend(top, middle)
      depend(middle, bottom)
    }
    graphs.push({ name: `diamond of ${width}`, spec: spec(random.shuffled(all)), cycles: 0 })
  }
  return graphs
}
