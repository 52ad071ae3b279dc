import { detector, type Detector } from '../detector.js';
import { FINDING_CATEGORIES as C, SEVERITIES as S } from '../types.js';
import { JAILBREAK_DETECTORS } from './jailbreak.js';

/** A few filler words between the verb and its object ("ignore all of the previous ..."). */
export const GAP = String.raw`(?:\s{1,4}(?:all|any|each|every|the|your|my|our|of|these|those|such|earlier|above|prior|previous|preceding|foregoing|existing|original|initial|system|developer|safety|ethical|content|given|provided|current|default|set|and|or)){0,5}`;

/** A negation right before the verb means the text warns *against* the override. */
const NEGATED = /(?:\bnot|\bnever|n't|\bno)\s{1,4}$/i;

/**
 * Prompt injection. Everything is word-bounded and needs a verb *and* an object ("ignore …
 * previous instructions"), so ordinary prose, YAML keys like `system_prompt` and words such
 * as "guidance" or "redundant" never match on their own.
 */
export const INJECTION_DETECTORS: readonly Detector[] = [
  detector(
    'instruction_override',
    C.PROMPT_INJECTION,
    S.HIGH,
    new RegExp(
      String.raw`\b(?:ignore|disregard|forget|override|bypass|abandon|drop|discard)${GAP}\s{1,4}(?:(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|safety|ethical|content|developer)\s{1,4})(?:\w{1,20}\s{1,4})?(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|constraints|polic(?:y|ies)|restrictions|commands|context|programming)\b`,
      'gi',
    ),
    {
      validate: (m, text, start) =>
        !NEGATED.test(text.slice(Math.max(start, m.index - 12), m.index)),
    },
  ),
  detector(
    'instruction_override',
    C.PROMPT_INJECTION,
    S.HIGH,
    /\b(?:ignore|disregard|forget)\s{1,4}(?:everything|all)\s{1,4}(?:you\s{1,4}(?:were|have\s{1,4}been)\s{1,4}(?:told|given|taught)|(?:said|written|stated)\s{1,4}(?:above|before|earlier)|above|before\s{1,4}this)\b/gi,
    {
      validate: (m, text, start) =>
        !NEGATED.test(text.slice(Math.max(start, m.index - 12), m.index)),
    },
  ),
  detector(
    'system_prompt_extraction',
    C.PROMPT_INJECTION,
    S.HIGH,
    /\b(?:reveal|show|print|display|repeat|output|leak|dump|disclose|tell\s{1,4}me|give\s{1,4}me|what\s{1,4}(?:is|are|was|were))\s{1,4}(?:me\s{1,4})?(?:your|the\s{1,4}(?:hidden|secret|confidential))\s{1,4}(?:\w{1,20}\s{1,4})?(?:system\s{1,4}(?:prompt|message|instructions)|(?:initial|hidden|secret|original|confidential)\s{1,4}(?:prompt|instructions)|instructions\s{1,4}(?:above|verbatim)|prompt\s{1,4}(?:above|verbatim))\b/gi,
  ),
  detector(
    'system_prompt_extraction',
    C.PROMPT_INJECTION,
    S.HIGH,
    /\b(?:repeat|print|output|reproduce)\s{1,4}(?:all\s{1,4})?(?:the\s{1,4})?(?:words|text|everything)\s{1,4}(?:above|before\s{1,4}this)(?:\s{1,4}verbatim)?\b/gi,
  ),
  detector(
    'chat_role_delimiter',
    C.PROMPT_INJECTION,
    S.HIGH,
    /<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>|\[\/?INST\]|<<\/?SYS>>|<\/?(?:start_of_turn|end_of_turn)>/g,
    { prefilter: (t) => t.includes('<') || t.includes('[') },
  ),
  ...JAILBREAK_DETECTORS,
];
