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
  { path: 'claims', label: 'Claims', component: lazy(() => import('./screens/claims')) },
  { path: 'members', label: 'Members', component: lazy(() => import('./screens/members')) },
  { path: 'payouts', label: 'Payouts', component: lazy(() => import('./screens/payouts')) },
  { path: 'networks', label: 'Networks', component: lazy(() => import('./screens/networks')) },
  { path: 'shops', label: 'Shops', component: lazy(() => import('./screens/shops')) },
  { path: 'pages', label: 'Pages', component: lazy(() => import('./screens/pages')) },
  { path: 'coupons', label: 'Coupons', component: lazy(() => import('./screens/coupons')) },
  { path: 'log', label: 'Log', component: lazy(() => import('./screens/log')) },
  { path: 'jobs', label: 'Jobs', component: lazy(() => import('./screens/jobs')) },
  { path: 'schedules', label: 'Schedules', component: lazy(() => import('./screens/schedules')) },
  { path: 'webhooks', label: 'Webhooks', component: lazy(() => import('./screens/webhooks')) },
  { path: 'settings', label: 'Settings', component: lazy(() => import('./screens/settings')) },
];
