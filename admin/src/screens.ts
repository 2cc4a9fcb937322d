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
}

export const SCREENS: Screen[] = [
  { path: 'overview', label: 'Overview', component: lazy(() => import('./screens/overview')) },
  { path: 'orders', label: 'Orders', component: lazy(() => import('./screens/orders')) },
  { path: 'members', label: 'Members', component: lazy(() => import('./screens/members')) },
];
