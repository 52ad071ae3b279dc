import { Graph, layout, type EdgeLabel, type GraphLabel, type NodeLabel } from '@dagrejs/dagre';
import { useMemo } from 'preact/hooks';
import { stateClass, type StepState } from '../step-states';

export interface DagNodeView {
  id: string;
  /** A second line: the agent, the step kind. */
  detail: string;
}

export interface DagProps {
  /** Names the drawing for screen readers. */
  label: string;
  nodes: readonly DagNodeView[];
  edges: readonly { source: string; target: string }[];
  /** Each step's state (a live run); absent: the bare topology. */
  states?: Readonly<Record<string, StepState>>;
  /** A third line per step (map item counts, retries). */
  notes?: Readonly<Record<string, string>>;
  selected?: string | undefined;
  /** Makes each step a button (Enter or Space selects it). */
  onSelect?: (id: string) => void;
}

const NODE_HEIGHT = 60;
const CHAR_WIDTH = 7.4;

interface Laid {
  width: number;
  height: number;
  nodes: { id: string; x: number; y: number; width: number }[];
  edges: { key: string; points: string }[];
}

/** Lays the DAG out top to bottom with dagre (ranks by dependency). */
function lay(nodes: readonly DagNodeView[], edges: DagProps['edges']): Laid {
  const graph = new Graph<GraphLabel, NodeLabel, EdgeLabel>();
  graph.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 44, marginx: 8, marginy: 8 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) {
    const chars = Math.max(node.id.length, node.detail.length, 12);
    graph.setNode(node.id, { width: Math.ceil(chars * CHAR_WIDTH + 28), height: NODE_HEIGHT });
  }
  for (const edge of edges) {
    if (graph.hasNode(edge.source) && graph.hasNode(edge.target)) {
      graph.setEdge(edge.source, edge.target);
    }
  }
  layout(graph);
  const size = graph.graph();
  return {
    width: Math.ceil(size.width ?? 0),
    height: Math.ceil(size.height ?? 0),
    nodes: nodes.map((node) => {
      const placed = graph.node(node.id);
      return { id: node.id, x: placed.x ?? 0, y: placed.y ?? 0, width: placed.width };
    }),
    edges: graph.edges().map((edge) => ({
      key: `${edge.v}->${edge.w}`,
      points: (graph.edge(edge).points ?? []).map((p) => `${p.x},${p.y}`).join(' '),
    })),
  };
}

/** A workflow's DAG as SVG: one box per step, coloured by its state when a run is shown. */
export function Dag({ label, nodes, edges, states, notes, selected, onSelect }: DagProps) {
  const laid = useMemo(() => lay(nodes, edges), [nodes, edges]);
  const details = new Map(nodes.map((node) => [node.id, node.detail]));
  return (
    <div class="dag-scroll">
      <svg
        class="dag"
        role="group"
        aria-label={label}
        viewBox={`0 0 ${laid.width} ${laid.height}`}
        width={laid.width}
        height={laid.height}
      >
        <defs>
          <marker
            id="dag-arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" class="dag-arrowhead" />
          </marker>
        </defs>
        {laid.edges.map((edge) => (
          <polyline
            key={edge.key}
            class="dag-edge"
            points={edge.points}
            marker-end="url(#dag-arrow)"
          />
        ))}
        {laid.nodes.map((node) => {
          const state = states?.[node.id];
          const note = notes?.[node.id];
          const selectable = onSelect !== undefined;
          const name = `${node.id}${state === undefined ? '' : `: ${state}`}${note ? `, ${note}` : ''}`;
          return (
            <g
              key={node.id}
              class={`dag-node ${state === undefined ? '' : stateClass(state)} ${
                selected === node.id ? 'selected' : ''
              }`}
              data-step={node.id}
              data-state={state}
              transform={`translate(${node.x - node.width / 2}, ${node.y - NODE_HEIGHT / 2})`}
              {...(selectable
                ? {
                    role: 'button',
                    // Lower case: on SVG elements Preact sets attributes, and tabIndex is not one.
                    tabindex: 0,
                    'aria-pressed': selected === node.id,
                    'aria-label': name,
                    onClick: () => onSelect(node.id),
                    onKeyDown: (event: KeyboardEvent) => {
                      if (event.key === 'Enter' || event.key === ' ') {
                        event.preventDefault();
                        onSelect(node.id);
                      }
                    },
                  }
                : { role: 'img', 'aria-label': name })}
            >
              <rect width={node.width} height={NODE_HEIGHT} rx="6" />
              <text x="12" y="20" class="dag-name">
                {node.id}
              </text>
              <text x="12" y="37" class="dag-detail">
                {details.get(node.id)}
              </text>
              <text x="12" y="52" class="dag-state">
                {state === undefined ? '' : state}
                {note ? ` · ${note}` : ''}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
