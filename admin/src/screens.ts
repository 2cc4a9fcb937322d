// Every screen of the admin app: its path under /admin, its menu label, and its code, loaded on
// demand so that signing in and the overview stay small.
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

export interface ScreenProps {
  /** Path segments after the screen's own: /admin/members/12 → ['12']. */
  rest: string[];
  query: URLSearchParams;
}

export interface Screen {
  path: string;
  label: string;
  component: LazyExoticComponent<ComponentType<ScreenProps>>;
  /** Fetches the screen's chunk (the lazy component gets the same module). */
  load: () => Promise<unknown>;
}

function screen(path: string, label: string, load: () => Promise<{ default: ComponentType<ScreenProps> }>): Screen {
  return { path, label, component: lazy(load), load };
}

export const SCREENS: Screen[] = [
  screen('overview', 'Overview', () => import('./screens/overview')),
  screen('orders', 'Orders', () => import('./screens/orders')),
  screen('claims', 'Claims', () => import('./screens/claims')),
  screen('clicks', 'Clicks', () => import('./screens/clicks')),
  screen('members', 'Members', () => import('./screens/members')),
  screen('users', 'Users', () => import('./screens/users')),
  screen('payouts', 'Payouts', () => import('./screens/payouts')),
  screen('exports', 'Exports', () => import('./screens/exports')),
  screen('networks', 'Networks', () => import('./screens/networks')),
  screen('shops', 'Shops', () => import('./screens/shops')),
  screen('pages', 'Pages', () => import('./screens/pages')),
  screen('coupons', 'Coupons', () => import('./screens/coupons')),
  screen('log', 'Log', () => import('./screens/log')),
  screen('jobs', 'Jobs', () => import('./screens/jobs')),
  screen('schedules', 'Schedules', () => import('./screens/schedules')),
  screen('webhooks', 'Webhooks', () => import('./screens/webhooks')),
  screen('settings', 'Settings', () => import('./screens/settings')),
];

/**
 * Starts fetching the chunk of the screen at `pathname` (/admin/orders → orders; /admin/ → the
 * overview) before the session is resumed, so the screen's code arrives with it rather than after.
 */
export function preloadScreen(pathname: string): void {
  const segment = pathname.replace(/^\/admin\/?/, '').split('/')[0] || 'overview';
  const found = SCREENS.find((s) => s.path === segment);
  if (found) void found.load();
}
