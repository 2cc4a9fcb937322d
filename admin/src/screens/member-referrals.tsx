// A member's referrals both ways (GET /referrals?referee_id= and ?referrer_id=), and the two
// changes an administrator makes: make a member the referrer of another (POST /referrals, the
// member picker choosing the other one) and end a live referral (DELETE /referrals/{referee_id},
// after a confirmation). What the service refuses (self-referral, a cycle, a member who already
// has a referrer) is shown in the modal as the API's message.
import { Button, Card, CardBody, CardHeader, Notice, Spinner, VisuallyHidden } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import { Money } from '../lib/money';
import { MemberPicker } from './member-picker';

/** A referral as GET /referrals answers. */
interface Referral {
  id: number;
  referrer: { id: number; login: string; display_name: string };
  referee: { id: number; login: string; display_name: string };
  since: string;
  ended_at: string | null;
  active: boolean;
  earned: { currency: string; amount: string }[];
}

const nameOf = (m: { login: string; display_name: string }) => m.display_name || m.login;

/** Which change is open: adding (this member as referee or as referrer) or ending one. */
type Change = { kind: 'referrer' } | { kind: 'referee' } | { kind: 'end'; referral: Referral };

export function ReferralsTab({ id }: { id: number }) {
  const [referredBy, setReferredBy] = useState<Referral[] | null>(null);
  const [referred, setReferred] = useState<Referral[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [change, setChange] = useState<Change | null>(null);
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: tick is the reload.
  useEffect(() => {
    const fail = (err: unknown) => setError(errorMessage(err));
    api<Referral[]>('/referrals', { query: { referee_id: id, per_page: 100 } }).then(setReferredBy, fail);
    api<Referral[]>('/referrals', { query: { referrer_id: id, per_page: 100 } }).then(setReferred, fail);
  }, [id, tick]);
  if (error)
    return (
      <Notice status="error" isDismissible={false}>
        {error}
      </Notice>
    );
  if (!referredBy || !referred) return <Spinner />;
  const live = referredBy.find((r) => r.active);
  const finish = (message: string) => {
    setChange(null);
    setDone(message);
    setTick((t) => t + 1);
  };
  const open = (c: Change) => {
    setDone(null);
    setChange(c);
  };
  return (
    <>
      {done ? (
        <Notice status="success" onRemove={() => setDone(null)}>
          {done}
        </Notice>
      ) : null}
      <div className="ct-cards">
        <Card>
          <CardHeader>
            <h2>Referred by</h2>
            {live ? null : (
              <Button __next40pxDefaultSize variant="secondary" onClick={() => open({ kind: 'referrer' })}>
                Set referrer
              </Button>
            )}
          </CardHeader>
          <CardBody>
            <ReferralTable referrals={referredBy} who="referrer" empty="Nobody referred this member." onEnd={(referral) => open({ kind: 'end', referral })} />
          </CardBody>
        </Card>
        <Card>
          <CardHeader>
            <h2>Members they referred</h2>
            <Button __next40pxDefaultSize variant="secondary" onClick={() => open({ kind: 'referee' })}>
              Add referred member
            </Button>
          </CardHeader>
          <CardBody>
            <ReferralTable referrals={referred} who="referee" empty="This member has referred nobody." onEnd={(referral) => open({ kind: 'end', referral })} />
          </CardBody>
        </Card>
      </div>
      {change && change.kind !== 'end' ? (
        <AddReferralModal
          id={id}
          as={change.kind}
          onClose={() => setChange(null)}
          onDone={(r) => finish(`${nameOf(r.referrer)} is now the referrer of ${nameOf(r.referee)}.`)}
        />
      ) : null}
      {change?.kind === 'end' ? (
        <ActionModal<Referral>
          title="End referral"
          submitLabel="End referral"
          destructive
          request={() => ({ path: `/referrals/${change.referral.referee.id}`, method: 'DELETE' })}
          onClose={() => setChange(null)}
          onDone={(r) => finish(`The referral of ${nameOf(r.referee)} by ${nameOf(r.referrer)} has ended.`)}
        >
          <p>
            {nameOf(change.referral.referrer)} will earn no referral credit on the future cashback of {nameOf(change.referral.referee)}. Credits already posted
            stay.
          </p>
        </ActionModal>
      ) : null}
    </>
  );
}

/** Make this member the referee (`as` referrer: pick who referred them) or the referrer (pick whom they referred). */
function AddReferralModal({ id, as, onClose, onDone }: { id: number; as: 'referrer' | 'referee'; onClose: () => void; onDone: (r: Referral) => void }) {
  const [other, setOther] = useState<string | null>(null);
  return (
    <ActionModal<Referral>
      title={as === 'referrer' ? 'Set who referred this member' : 'Add a member they referred'}
      submitLabel="Save referral"
      ready={other !== null}
      request={() => ({
        path: '/referrals',
        data: as === 'referrer' ? { referrer_id: Number(other), referee_id: id } : { referrer_id: id, referee_id: Number(other) },
      })}
      onClose={onClose}
      onDone={onDone}
    >
      <MemberPicker
        label={as === 'referrer' ? 'Referrer' : 'Referred member'}
        value={other}
        onChange={(value) => setOther(value)}
        help="The referrer earns a share of the referred member's approved cashback from now on."
      />
    </ActionModal>
  );
}

function ReferralTable({
  referrals,
  who,
  empty,
  onEnd,
}: {
  referrals: Referral[];
  who: 'referrer' | 'referee';
  empty: string;
  onEnd: (referral: Referral) => void;
}) {
  if (referrals.length === 0) return <p>{empty}</p>;
  return (
    <table className="ct-table">
      <thead>
        <tr>
          <th scope="col">Member</th>
          <th scope="col">Since</th>
          <th scope="col">State</th>
          <th scope="col" className="ct-num">
            Referral credits
          </th>
          <th scope="col">
            <VisuallyHidden>Actions</VisuallyHidden>
          </th>
        </tr>
      </thead>
      <tbody>
        {referrals.map((r) => {
          const m = r[who];
          return (
            <tr key={r.id}>
              <td>
                <Link to={`/members/${m.id}`}>{nameOf(m)}</Link>
              </td>
              <td>{new Date(r.since).toLocaleDateString()}</td>
              <td>{r.active ? 'Active' : `Ended ${new Date(r.ended_at ?? r.since).toLocaleDateString()}`}</td>
              <td className="ct-num">
                {r.earned.length === 0
                  ? '—'
                  : r.earned.map((e) => (
                      <div key={e.currency}>
                        <Money amount={e.amount} currency={e.currency} />
                      </div>
                    ))}
              </td>
              <td>
                {r.active ? (
                  <Button
                    variant="link"
                    isDestructive
                    onClick={() => onEnd(r)}
                    aria-label={`End the referral of ${nameOf(r.referee)} by ${nameOf(r.referrer)}`}
                  >
                    End
                  </Button>
                ) : null}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
