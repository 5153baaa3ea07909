// Light or dark: the choice kept for this browser (localStorage), else the system's preference, followed live.
// The theme is `data-theme` on <html> (styles.css holds both palettes); charts read it to colour their axes.
import { useSyncExternalStore } from 'react';

const KEY = 'gw.theme';
const CHOICES = ['system', 'light', 'dark'] as const;
type Choice = (typeof CHOICES)[number];
type Theme = 'light' | 'dark';

const system = matchMedia('(prefers-color-scheme: dark)');
const listeners = new Set<() => void>();

const choice = (): Choice => {
  const kept = localStorage.getItem(KEY);
  return (CHOICES as readonly string[]).includes(kept ?? '') ? (kept as Choice) : 'system';
};

const themeOf = (chosen: Choice): Theme =>
  chosen === 'system' ? (system.matches ? 'dark' : 'light') : chosen;

function apply(): void {
  document.documentElement.dataset.theme = themeOf(choice());
  for (const listener of listeners) listener();
}

/** Sets the theme before the first render, and follows the system's preference while it is the choice. */
export function startTheme(): void {
  apply();
  system.addEventListener('change', apply);
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The theme in force; a component using it renders again when it changes. */
export function useTheme(): Theme {
  return useSyncExternalStore(subscribe, () => themeOf(choice()));
}

export function ThemeChoice() {
  const chosen = useSyncExternalStore(subscribe, choice);
  return (
    <select
      aria-label="Theme"
      className="theme-choice"
      value={chosen}
      onChange={(event) => {
        localStorage.setItem(KEY, event.target.value);
        apply();
      }}
    >
      <option value="system">Theme: system</option>
      <option value="light">Theme: light</option>
      <option value="dark">Theme: dark</option>
    </select>
  );
}
