/**
 * A path to a right in a few words for a plan's reader: `team payments-admins (group eng-leads),
 * role teams-admin`. The access review's own text (review/paths.ts pathText) spells every step
 * out for an auditor; a plan line has to be read in a second.
 */
import type { Step } from '../../review/model.js';

function stepWords(s: Step): string {
  switch (s.step) {
    case 'member':
      return s.by === 'self' ? `team ${s.team}` : s.by === 'users' ? `team ${s.team}` : `team ${s.team} (${s.by.replace(/^group:/, 'group ')})`;
    case 'role':
      return `role ${s.role}`;
    case 'owner':
      return s.user !== undefined ? `owner of team ${s.of}` : `owner of team ${s.of} (team ${s.team})`;
    case 'access':
      return `access rule ${s.name ?? s.rule} of team ${s.of}`;
    case 'listed':
      return 'the open list';
    case 'ownKeys':
      return 'own keys';
    case 'teamKeys':
      return s.team === '*' ? 'may update every team' : `may update team ${s.team}`;
    case 'scope':
      return `key ${s.key}'s scope`;
  }
}

/** The steps of one path, joined; a member step before the owner or rule it leads to is folded into it. */
export function viaText(steps: Step[]): string {
  const words: string[] = [];
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    const next = steps[i + 1];
    // `team ops` then `owner of team payments (team ops)`: the second says both.
    if (s.step === 'member' && next && (next.step === 'owner' || next.step === 'access') && next.team === s.team && s.by === 'users') continue;
    if (s.step === 'member' && next?.step === 'role' && next.team === s.team) {
      words.push(`${stepWords(s)}, ${stepWords(next)}`);
      i++;
      continue;
    }
    words.push(stepWords(s));
  }
  return words.join(', ');
}
